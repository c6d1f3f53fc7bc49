// Segmented sieve of Eratosthenes: primes in [low, high) with O(sqrt(high)) memory.
#include <cmath>
#include <cstdint>
#include <iostream>
#include <vector>

std::vector<std::uint32_t> simple_sieve(std::uint32_t limit) {
    std::vector<bool> composite(limit + 1, false);
    std::vector<std::uint32_t> primes;
    for (std::uint32_t i = 2; i <= limit; ++i) {
        if (composite[i]) {
            continue;
        }
        primes.push_back(i);
        for (std::uint64_t j = static_cast<std::uint64_t>(i) * i; j <= limit; j += i) {
            composite[j] = true;
        }
    }
    return primes;
}

std::vector<std::uint64_t> primes_in_range(
    std::uint64_t low, std::uint64_t high, std::uint64_t segment = 1 << 16) {
    std::vector<std::uint64_t> found;
    if (high <= 2 || low >= high) {
        return found;
    }
    low = low < 2 ? 2 : low;
    const double sqrt_high = std::sqrt(static_cast<double>(high));
    const auto root = static_cast<std::uint32_t>(sqrt_high) + 1;
    const auto base = simple_sieve(root);
    std::vector<bool> marked;
    for (std::uint64_t start = low; start < high; start += segment) {
        const std::uint64_t end = start + segment < high ? start + segment : high;
        marked.assign(end - start, false);
        for (const std::uint32_t p : base) {
            const std::uint64_t square = static_cast<std::uint64_t>(p) * p;
            if (square >= end) {
                break;
            }
            // First multiple of p inside the segment, but never p itself.
            std::uint64_t first = (start + p - 1) / p * p;
            if (first < square) {
                first = square;
            }
            for (std::uint64_t m = first; m < end; m += p) {
                marked[m - start] = true;
            }
        }
        for (std::uint64_t n = start; n < end; ++n) {
            if (!marked[n - start]) {
                found.push_back(n);
            }
        }
    }
    return found;
}

std::uint64_t count_twin_pairs(const std::vector<std::uint64_t>& primes) {
    std::uint64_t twins = 0;
    for (std::size_t i = 1; i < primes.size(); ++i) {
        if (primes[i] - primes[i - 1] == 2) {
            ++twins;
        }
    }
    return twins;
}

int main() {
    const auto small = primes_in_range(0, 60);
    for (const auto p : small) {
        std::cout << p << ' ';
    }
    std::cout << '\n';
    const std::uint64_t low = 1000000000ULL;
    const auto window = primes_in_range(low, low + 100000);
    std::cout << "primes in window: " << window.size() << '\n';
    std::cout << "twin pairs: " << count_twin_pairs(window) << '\n';
    std::cout << "first: " << window.front() << ", last: " << window.back() << '\n';
    return 0;
}
