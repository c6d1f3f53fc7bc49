import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/** A synchronous publish/subscribe bus keyed by event class. */
final class EventBus {
    interface Subscription extends AutoCloseable {
        @Override
        void close();
    }

    record OrderPlaced(String orderId, int quantity, double price) {}

    record OrderCancelled(String orderId, String reason) {}

    private final Map<Class<?>, List<Consumer<Object>>> handlers =
            new LinkedHashMap<>();
    private final List<String> deadLetters = new ArrayList<>();

    synchronized <T> Subscription subscribe(Class<T> type, Consumer<? super T> fn) {
        Consumer<Object> wrapped = event -> fn.accept(type.cast(event));
        List<Consumer<Object>> list =
                handlers.computeIfAbsent(type, k -> new CopyOnWriteArrayList<>());
        list.add(wrapped);
        return () -> list.remove(wrapped);
    }

    int publish(Object event) {
        List<Consumer<Object>> targets = new ArrayList<>();
        synchronized (this) {
            for (Map.Entry<Class<?>, List<Consumer<Object>>> e : handlers.entrySet()) {
                if (e.getKey().isInstance(event)) {
                    targets.addAll(e.getValue());
                }
            }
        }
        if (targets.isEmpty()) {
            deadLetters.add(event.toString());
            return 0;
        }
        int delivered = 0;
        for (Consumer<Object> target : targets) {
            try {
                target.accept(event);
                delivered++;
            } catch (RuntimeException ex) {
                // One failing subscriber must not stop delivery to the others.
                deadLetters.add(event + " -> " + ex.getMessage());
            }
        }
        return delivered;
    }

    List<String> deadLetters() {
        return List.copyOf(deadLetters);
    }

    public static void main(String[] args) {
        EventBus bus = new EventBus();
        double[] revenue = {0.0};
        bus.subscribe(OrderPlaced.class, e -> revenue[0] += e.quantity() * e.price());
        Subscription audit = bus.subscribe(Object.class,
                e -> System.out.println("audit: " + e));
        bus.subscribe(OrderCancelled.class, e -> {
            if (e.reason().isBlank()) {
                throw new IllegalStateException("missing reason");
            }
        });
        bus.publish(new OrderPlaced("A-100", 3, 19.99));
        bus.publish(new OrderPlaced("A-101", 1, 250.00));
        audit.close();
        bus.publish(new OrderCancelled("A-100", ""));
        bus.publish("unrouted message");
        System.out.printf("revenue %.2f%n", revenue[0]);
        System.out.println("dead letters: " + bus.deadLetters());
    }
}
