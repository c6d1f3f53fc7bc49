// A generic LRU cache: a list keeps recency order, a hash map finds entries.
#include <cstddef>
#include <iostream>
#include <list>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

template <typename Key, typename Value>
class LruCache {
public:
    explicit LruCache(std::size_t capacity) : capacity_(capacity) {}

    std::optional<Value> get(const Key& key) {
        auto it = index_.find(key);
        if (it == index_.end()) {
            ++misses_;
            return std::nullopt;
        }
        ++hits_;
        // splice moves the node to the front without invalidating iterators.
        order_.splice(order_.begin(), order_, it->second);
        return it->second->second;
    }

    void put(const Key& key, Value value) {
        auto it = index_.find(key);
        if (it != index_.end()) {
            it->second->second = std::move(value);
            order_.splice(order_.begin(), order_, it->second);
            return;
        }
        if (capacity_ == 0) {
            return;
        }
        if (order_.size() == capacity_) {
            index_.erase(order_.back().first);
            order_.pop_back();
        }
        order_.emplace_front(key, std::move(value));
        index_[key] = order_.begin();
    }

    bool erase(const Key& key) {
        auto it = index_.find(key);
        if (it == index_.end()) {
            return false;
        }
        order_.erase(it->second);
        index_.erase(it);
        return true;
    }

    std::size_t size() const { return order_.size(); }

    double hit_rate() const {
        const std::size_t total = hits_ + misses_;
        return total == 0 ? 0.0 : static_cast<double>(hits_) / total;
    }

    template <typename Fn>
    void for_each(Fn fn) const {
        for (const auto& [key, value] : order_) {
            fn(key, value);
        }
    }

private:
    using Entry = std::pair<Key, Value>;
    std::size_t capacity_;
    std::list<Entry> order_;
    std::unordered_map<Key, typename std::list<Entry>::iterator> index_;
    std::size_t hits_ = 0;
    std::size_t misses_ = 0;
};

int main() {
    LruCache<std::string, int> cache(3);
    cache.put("north", 12);
    cache.put("south", 7);
    cache.put("east", 31);
    cache.get("north");
    cache.put("west", 4);
    cache.erase("east");
    cache.put("center", 18);
    if (!cache.get("south")) {
        std::cout << "south was evicted\n";
    }
    cache.for_each([](const std::string& k, int v) {
        std::cout << k << " -> " << v << '\n';
    });
    std::cout << "size " << cache.size() << ", hit rate " << cache.hit_rate() << '\n';
    return 0;
}
