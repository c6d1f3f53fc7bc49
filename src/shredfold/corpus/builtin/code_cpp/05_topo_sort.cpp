// Build-order planner: Kahn's topological sort with cycle reporting.
#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <queue>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

class BuildGraph {
public:
    void depends(const std::string& target, const std::string& dependency) {
        edges_[dependency].insert(target);
        edges_[target];
        ++indegree_[target];
        indegree_[dependency];
    }

    // Targets in an order where every dependency comes first; ties sorted by name
    // so the plan is identical from run to run.
    std::vector<std::string> order() const {
        std::map<std::string, int> remaining = indegree_;
        using MinQueue =
            std::priority_queue<std::string, std::vector<std::string>, std::greater<>>;
        MinQueue ready;
        for (const auto& [name, degree] : remaining) {
            if (degree == 0) {
                ready.push(name);
            }
        }
        std::vector<std::string> plan;
        while (!ready.empty()) {
            const std::string next = ready.top();
            ready.pop();
            plan.push_back(next);
            for (const auto& user : edges_.at(next)) {
                if (--remaining[user] == 0) {
                    ready.push(user);
                }
            }
        }
        if (plan.size() != indegree_.size()) {
            std::string stuck;
            for (const auto& [name, degree] : remaining) {
                if (degree > 0) {
                    stuck += (stuck.empty() ? "" : ", ") + name;
                }
            }
            throw std::runtime_error("dependency cycle among: " + stuck);
        }
        return plan;
    }

    std::size_t depth(const std::string& target) const {
        std::size_t best = 0;
        for (const auto& [dep, users] : edges_) {
            if (users.count(target)) {
                best = std::max(best, depth(dep) + 1);
            }
        }
        return best;
    }

private:
    std::map<std::string, std::set<std::string>> edges_;
    std::map<std::string, int> indegree_;
};

int main() {
    BuildGraph graph;
    graph.depends("app", "net");
    graph.depends("app", "ui");
    graph.depends("net", "crypto");
    graph.depends("net", "core");
    graph.depends("ui", "core");
    graph.depends("crypto", "core");
    graph.depends("tests", "app");
    for (const auto& step : graph.order()) {
        std::cout << graph.depth(step) << "  " << step << '\n';
    }
    graph.depends("core", "tests");
    try {
        graph.order();
    } catch (const std::exception& err) {
        std::cout << err.what() << '\n';
    }
    return 0;
}
