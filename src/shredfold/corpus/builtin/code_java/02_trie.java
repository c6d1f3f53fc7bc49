import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** A prefix tree that counts words and suggests completions in sorted order. */
final class PrefixTrie {
    private static final class Node {
        final Map<Character, Node> children = new TreeMap<>();
        int count;
        int passing;
    }

    private final Node root = new Node();
    private int distinct;

    void add(String word) {
        Node node = root;
        for (char ch : word.toLowerCase().toCharArray()) {
            node.passing++;
            node = node.children.computeIfAbsent(ch, c -> new Node());
        }
        node.passing++;
        if (node.count == 0) {
            distinct++;
        }
        node.count++;
    }

    int count(String word) {
        Node node = find(word.toLowerCase());
        return node == null ? 0 : node.count;
    }

    int countWithPrefix(String prefix) {
        Node node = find(prefix.toLowerCase());
        return node == null ? 0 : node.passing;
    }

    int distinctWords() {
        return distinct;
    }

    List<String> complete(String prefix, int limit) {
        List<String> out = new ArrayList<>();
        Node start = find(prefix.toLowerCase());
        if (start != null) {
            collect(start, new StringBuilder(prefix.toLowerCase()), out, limit);
        }
        return out;
    }

    private Node find(String prefix) {
        Node node = root;
        for (int i = 0; i < prefix.length() && node != null; i++) {
            node = node.children.get(prefix.charAt(i));
        }
        return node;
    }

    private void collect(Node node, StringBuilder path, List<String> out, int limit) {
        if (out.size() >= limit) {
            return;
        }
        if (node.count > 0) {
            out.add(path.toString());
        }
        for (Map.Entry<Character, Node> entry : node.children.entrySet()) {
            path.append(entry.getKey());
            collect(entry.getValue(), path, out, limit);
            path.deleteCharAt(path.length() - 1);
        }
    }

    public static void main(String[] args) {
        String text = "the quick brown fox jumps over the lazy dog then the fox "
                + "thinks about theory and throws the ball to the thrush";
        PrefixTrie trie = new PrefixTrie();
        for (String word : text.split("\\s+")) {
            trie.add(word);
        }
        System.out.println("distinct words: " + trie.distinctWords());
        System.out.println("count(the) = " + trie.count("the"));
        System.out.println("prefix th: " + trie.countWithPrefix("th"));
        System.out.println("complete(th) = " + trie.complete("th", 5));
        System.out.println("complete(fo) = " + trie.complete("fo", 5));
    }
}
