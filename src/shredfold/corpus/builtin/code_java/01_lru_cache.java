import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/** A least-recently-used cache built from a hash map and a doubly linked list. */
final class LruCache<K, V> {
    private static final class Node<K, V> {
        final K key;
        V value;
        Node<K, V> prev;
        Node<K, V> next;

        Node(K key, V value) {
            this.key = key;
            this.value = value;
        }
    }

    private final int capacity;
    private final Map<K, Node<K, V>> index = new HashMap<>();
    private final Node<K, V> head = new Node<>(null, null);
    private final Node<K, V> tail = new Node<>(null, null);
    private long hits;
    private long misses;

    LruCache(int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be positive");
        }
        this.capacity = capacity;
        head.next = tail;
        tail.prev = head;
    }

    int size() {
        return index.size();
    }

    V get(K key) {
        Node<K, V> node = index.get(Objects.requireNonNull(key));
        if (node == null) {
            misses++;
            return null;
        }
        hits++;
        unlink(node);
        pushFront(node);
        return node.value;
    }

    void put(K key, V value) {
        Node<K, V> node = index.get(Objects.requireNonNull(key));
        if (node != null) {
            node.value = value;
            unlink(node);
            pushFront(node);
            return;
        }
        if (index.size() == capacity) {
            Node<K, V> oldest = tail.prev;
            unlink(oldest);
            index.remove(oldest.key);
        }
        node = new Node<>(key, value);
        index.put(key, node);
        pushFront(node);
    }

    double hitRate() {
        long total = hits + misses;
        return total == 0 ? 0.0 : (double) hits / total;
    }

    private void unlink(Node<K, V> node) {
        node.prev.next = node.next;
        node.next.prev = node.prev;
    }

    private void pushFront(Node<K, V> node) {
        node.next = head.next;
        node.prev = head;
        head.next.prev = node;
        head.next = node;
    }

    @Override
    public String toString() {
        StringBuilder out = new StringBuilder("[");
        for (Node<K, V> n = head.next; n != tail; n = n.next) {
            if (out.length() > 1) {
                out.append(", ");
            }
            out.append(n.key).append('=').append(n.value);
        }
        return out.append(']').toString();
    }

    public static void main(String[] args) {
        LruCache<String, Integer> cache = new LruCache<>(3);
        cache.put("alpha", 1);
        cache.put("beta", 2);
        cache.put("gamma", 3);
        cache.get("alpha");
        cache.put("delta", 4);
        System.out.println(cache);
        System.out.printf("hit rate %.2f%n", cache.hitRate());
    }
}
