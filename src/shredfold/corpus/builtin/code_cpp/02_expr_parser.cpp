// Recursive-descent evaluator for arithmetic with variables and precedence.
#include <cctype>
#include <cmath>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

class Parser {
public:
    Parser(std::string text, const std::map<std::string, double>& vars)
        : text_(std::move(text)), vars_(vars) {}

    double parse() {
        double value = expression();
        skip_space();
        if (pos_ != text_.size()) {
            fail("unexpected '" + std::string(1, text_[pos_]) + "'");
        }
        return value;
    }

private:
    // expression := term (('+' | '-') term)*
    double expression() {
        double value = term();
        while (match('+') || match('-')) {
            const char op = text_[pos_ - 1];
            const double rhs = term();
            value = op == '+' ? value + rhs : value - rhs;
        }
        return value;
    }

    // term := power (('*' | '/') power)*
    double term() {
        double value = power();
        while (match('*') || match('/')) {
            const char op = text_[pos_ - 1];
            const double rhs = power();
            if (op == '/' && rhs == 0.0) {
                fail("division by zero");
            }
            value = op == '*' ? value * rhs : value / rhs;
        }
        return value;
    }

    // power := unary ('^' power)?   (right-associative)
    double power() {
        const double base = unary();
        if (match('^')) {
            return std::pow(base, power());
        }
        return base;
    }

    double unary() {
        if (match('-')) {
            return -unary();
        }
        return primary();
    }

    double primary() {
        skip_space();
        if (match('(')) {
            const double value = expression();
            if (!match(')')) {
                fail("expected ')'");
            }
            return value;
        }
        const std::size_t start = pos_;
        if (at(std::isalpha)) {
            while (at(std::isalnum)) {
                ++pos_;
            }
            const std::string name = text_.substr(start, pos_ - start);
            const auto it = vars_.find(name);
            if (it == vars_.end()) {
                fail("unknown variable '" + name + "'");
            }
            return it->second;
        }
        while (at(std::isdigit) || (pos_ < text_.size() && text_[pos_] == '.')) {
            ++pos_;
        }
        if (start == pos_) {
            fail("expected a number");
        }
        return std::stod(text_.substr(start, pos_ - start));
    }

    bool match(char c) {
        skip_space();
        if (pos_ < text_.size() && text_[pos_] == c) {
            ++pos_;
            return true;
        }
        return false;
    }

    // The <cctype> classifiers need an unsigned char value, never a plain char.
    bool at(int (*is_class)(int)) const {
        return pos_ < text_.size() && is_class(static_cast<unsigned char>(text_[pos_]));
    }

    void skip_space() {
        while (at(std::isspace)) {
            ++pos_;
        }
    }

    [[noreturn]] void fail(const std::string& message) const {
        throw std::runtime_error("column " + std::to_string(pos_ + 1) + ": " + message);
    }

    std::string text_;
    const std::map<std::string, double>& vars_;
    std::size_t pos_ = 0;
};

int main() {
    const std::map<std::string, double> vars = {
        {"rate", 0.04}, {"years", 10}, {"p", 2500},
    };
    const char* inputs[] = {
        "p * (1 + rate) ^ years", "2 ^ 3 ^ 2", "-(4 - 6) * 3.5",
        "p / (years - 10)", "rate * bonus",
    };
    for (const char* input : inputs) {
        try {
            const double value = Parser(input, vars).parse();
            std::cout << input << " = " << value << '\n';
        } catch (const std::exception& err) {
            std::cout << input << " -> error: " << err.what() << '\n';
        }
    }
    return 0;
}
