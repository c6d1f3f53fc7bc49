// Disjoint-set forest with path compression, used for Kruskal's spanning tree.
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <numeric>
#include <vector>

class UnionFind {
public:
    explicit UnionFind(std::size_t n) : parent_(n), size_(n, 1), sets_(n) {
        std::iota(parent_.begin(), parent_.end(), 0);
    }

    std::size_t find(std::size_t x) {
        while (parent_[x] != x) {
            parent_[x] = parent_[parent_[x]];
            x = parent_[x];
        }
        return x;
    }

    bool unite(std::size_t a, std::size_t b) {
        a = find(a);
        b = find(b);
        if (a == b) {
            return false;
        }
        // Attach the smaller tree below the larger one to keep paths short.
        if (size_[a] < size_[b]) {
            std::swap(a, b);
        }
        parent_[b] = a;
        size_[a] += size_[b];
        --sets_;
        return true;
    }

    std::size_t sets() const { return sets_; }

private:
    std::vector<std::size_t> parent_;
    std::vector<std::size_t> size_;
    std::size_t sets_;
};

struct Edge {
    std::size_t from;
    std::size_t to;
    std::int64_t weight;
};

std::vector<Edge> spanning_tree(std::size_t nodes, std::vector<Edge> edges) {
    std::sort(edges.begin(), edges.end(), [](const Edge& x, const Edge& y) {
        return x.weight < y.weight;
    });
    UnionFind forest(nodes);
    std::vector<Edge> chosen;
    for (const Edge& e : edges) {
        if (forest.unite(e.from, e.to)) {
            chosen.push_back(e);
            if (chosen.size() + 1 == nodes) {
                break;
            }
        }
    }
    return chosen;
}

int main() {
    const std::vector<Edge> cables = {
        {0, 1, 7}, {0, 3, 5}, {1, 2, 8}, {1, 3, 9}, {1, 4, 7},
        {2, 4, 5}, {3, 4, 15}, {3, 5, 6}, {4, 5, 8}, {4, 6, 9},
        {5, 6, 11},
    };
    const auto tree = spanning_tree(7, cables);
    std::int64_t total = 0;
    for (const Edge& e : tree) {
        std::cout << e.from << " - " << e.to << " : " << e.weight << '\n';
        total += e.weight;
    }
    std::cout << "total cable length: " << total << '\n';
    return 0;
}
