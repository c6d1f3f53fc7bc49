import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;

/** Shortest routes between stations of a small rail network. */
final class RailNetwork {
    private record Edge(int to, int minutes) {}

    private record Entry(int node, int distance) {}

    private final List<String> names = new ArrayList<>();
    private final Map<String, Integer> ids = new HashMap<>();
    private final List<List<Edge>> adjacency = new ArrayList<>();

    private int id(String name) {
        return ids.computeIfAbsent(name, n -> {
            names.add(n);
            adjacency.add(new ArrayList<>());
            return names.size() - 1;
        });
    }

    void connect(String a, String b, int minutes) {
        int u = id(a);
        int v = id(b);
        adjacency.get(u).add(new Edge(v, minutes));
        adjacency.get(v).add(new Edge(u, minutes));
    }

    List<String> route(String from, String to) {
        int source = id(from);
        int target = id(to);
        int[] dist = new int[names.size()];
        int[] prev = new int[names.size()];
        Arrays.fill(dist, Integer.MAX_VALUE);
        Arrays.fill(prev, -1);
        dist[source] = 0;
        PriorityQueue<Entry> queue =
                new PriorityQueue<>(Comparator.comparingInt(Entry::distance));
        queue.add(new Entry(source, 0));
        while (!queue.isEmpty()) {
            Entry current = queue.poll();
            if (current.distance() > dist[current.node()]) {
                continue;
            }
            if (current.node() == target) {
                break;
            }
            for (Edge edge : adjacency.get(current.node())) {
                int candidate = current.distance() + edge.minutes();
                if (candidate < dist[edge.to()]) {
                    dist[edge.to()] = candidate;
                    prev[edge.to()] = current.node();
                    queue.add(new Entry(edge.to(), candidate));
                }
            }
        }
        if (dist[target] == Integer.MAX_VALUE) {
            return List.of();
        }
        Deque<String> path = new ArrayDeque<>();
        for (int at = target; at != -1; at = prev[at]) {
            path.addFirst(names.get(at));
        }
        path.addLast(dist[target] + " min");
        return new ArrayList<>(path);
    }

    public static void main(String[] args) {
        RailNetwork net = new RailNetwork();
        net.connect("Central", "Harbor", 7);
        net.connect("Central", "Museum", 4);
        net.connect("Museum", "University", 6);
        net.connect("Harbor", "Airport", 18);
        net.connect("University", "Airport", 15);
        net.connect("Museum", "Stadium", 9);
        net.connect("Stadium", "Airport", 8);
        net.connect("Depot", "Yard", 3);
        System.out.println(net.route("Central", "Airport"));
        System.out.println(net.route("Harbor", "University"));
        System.out.println(net.route("Central", "Yard"));
    }
}
