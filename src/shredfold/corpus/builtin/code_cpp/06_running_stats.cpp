// Streaming statistics: Welford's mean and variance plus a fixed-bin histogram.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <iomanip>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

class RunningStats {
public:
    void add(double x) {
        ++count_;
        const double delta = x - mean_;
        mean_ += delta / static_cast<double>(count_);
        // Welford's update avoids the cancellation of the naive sum of squares.
        m2_ += delta * (x - mean_);
        min_ = std::min(min_, x);
        max_ = std::max(max_, x);
    }

    std::size_t count() const { return count_; }
    double mean() const { return mean_; }
    double min() const { return min_; }
    double max() const { return max_; }

    double variance() const {
        return count_ > 1 ? m2_ / static_cast<double>(count_ - 1) : 0.0;
    }

    double stddev() const { return std::sqrt(variance()); }

private:
    std::size_t count_ = 0;
    double mean_ = 0.0;
    double m2_ = 0.0;
    double min_ = std::numeric_limits<double>::infinity();
    double max_ = -std::numeric_limits<double>::infinity();
};

template <std::size_t Bins>
class Histogram {
public:
    Histogram(double low, double high) : low_(low), width_((high - low) / Bins) {}

    void add(double x) {
        auto bin = static_cast<long>(std::floor((x - low_) / width_));
        bin = std::clamp(bin, 0L, static_cast<long>(Bins) - 1);
        ++counts_[static_cast<std::size_t>(bin)];
    }

    void print(std::ostream& out, std::size_t scale = 1) const {
        for (std::size_t i = 0; i < Bins; ++i) {
            const double from = low_ + width_ * static_cast<double>(i);
            out << std::setw(6) << from << " | "
                << std::string(counts_[i] / scale, '#') << ' ' << counts_[i] << '\n';
        }
    }

private:
    double low_;
    double width_;
    std::array<std::size_t, Bins> counts_{};
};

int main() {
    // Daily commute times in minutes, as logged by a transit app.
    const std::vector<double> minutes = {
        34.5, 29.0, 41.2, 38.8, 27.5, 52.0, 33.3, 30.1, 45.6, 36.7,
        31.9, 28.4, 39.5, 61.0, 35.2, 32.8, 37.4, 44.1, 29.9, 33.0,
    };
    RunningStats stats;
    Histogram<8> hist(20.0, 70.0);
    for (const double m : minutes) {
        stats.add(m);
        hist.add(m);
    }
    std::cout << std::fixed << std::setprecision(2);
    std::cout << "n=" << stats.count() << " mean=" << stats.mean();
    std::cout << " sd=" << stats.stddev();
    std::cout << " range=[" << stats.min() << ", " << stats.max() << "]\n";
    hist.print(std::cout);
    return 0;
}
