import java.util.Iterator;
import java.util.NoSuchElementException;

/** A fixed-capacity ring buffer that overwrites the oldest element when full. */
final class RingBuffer<T> implements Iterable<T> {
    private final Object[] slots;
    private int head;
    private int size;
    private long dropped;

    RingBuffer(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1");
        }
        slots = new Object[capacity];
    }

    int capacity() {
        return slots.length;
    }

    int size() {
        return size;
    }

    long dropped() {
        return dropped;
    }

    void add(T value) {
        int tail = (head + size) % slots.length;
        slots[tail] = value;
        if (size == slots.length) {
            head = (head + 1) % slots.length;
            dropped++;
        } else {
            size++;
        }
    }

    @SuppressWarnings("unchecked")
    T get(int i) {
        if (i < 0 || i >= size) {
            throw new IndexOutOfBoundsException("index " + i + ", size " + size);
        }
        return (T) slots[(head + i) % slots.length];
    }

    T poll() {
        if (size == 0) {
            throw new NoSuchElementException("buffer is empty");
        }
        T value = get(0);
        slots[head] = null;
        head = (head + 1) % slots.length;
        size--;
        return value;
    }

    @Override
    public Iterator<T> iterator() {
        return new Iterator<>() {
            private int next;

            @Override
            public boolean hasNext() {
                return next < size;
            }

            @Override
            public T next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                return get(next++);
            }
        };
    }

    static double movingAverage(RingBuffer<Double> window) {
        double sum = 0.0;
        for (double v : window) {
            sum += v;
        }
        return window.size() == 0 ? 0.0 : sum / window.size();
    }

    public static void main(String[] args) {
        RingBuffer<Double> window = new RingBuffer<>(4);
        double[] readings = {21.5, 22.0, 22.4, 23.1, 24.0, 23.6, 22.9};
        for (double reading : readings) {
            window.add(reading);
            System.out.printf("after %.1f: avg %.2f%n", reading, movingAverage(window));
        }
        System.out.println("dropped " + window.dropped() + ", oldest " + window.poll());
    }
}
