import java.util.Arrays;

/** Dense matrices with multiplication and Gaussian elimination. */
final class DenseMatrix {
    private final int rows;
    private final int cols;
    private final double[] data;

    DenseMatrix(int rows, int cols) {
        this.rows = rows;
        this.cols = cols;
        this.data = new double[rows * cols];
    }

    static DenseMatrix of(double[][] values) {
        DenseMatrix m = new DenseMatrix(values.length, values[0].length);
        for (int i = 0; i < m.rows; i++) {
            System.arraycopy(values[i], 0, m.data, i * m.cols, m.cols);
        }
        return m;
    }

    static DenseMatrix identity(int n) {
        DenseMatrix m = new DenseMatrix(n, n);
        for (int i = 0; i < n; i++) {
            m.set(i, i, 1.0);
        }
        return m;
    }

    double get(int r, int c) {
        return data[r * cols + c];
    }

    void set(int r, int c, double value) {
        data[r * cols + c] = value;
    }

    DenseMatrix times(DenseMatrix other) {
        if (cols != other.rows) {
            throw new IllegalArgumentException("shape mismatch: " + cols + " vs "
                    + other.rows);
        }
        DenseMatrix out = new DenseMatrix(rows, other.cols);
        for (int i = 0; i < rows; i++) {
            for (int k = 0; k < cols; k++) {
                double a = get(i, k);
                for (int j = 0; j < other.cols; j++) {
                    out.data[i * out.cols + j] += a * other.get(k, j);
                }
            }
        }
        return out;
    }

    DenseMatrix transpose() {
        DenseMatrix out = new DenseMatrix(cols, rows);
        for (int i = 0; i < rows; i++) {
            for (int j = 0; j < cols; j++) {
                out.set(j, i, get(i, j));
            }
        }
        return out;
    }

    /** Solve A x = b with partial pivoting; A must be square and non-singular. */
    double[] solve(double[] b) {
        int n = rows;
        double[][] a = new double[n][];
        for (int i = 0; i < n; i++) {
            a[i] = Arrays.copyOfRange(data, i * cols, (i + 1) * cols);
        }
        double[] x = b.clone();
        for (int p = 0; p < n; p++) {
            int best = p;
            for (int i = p + 1; i < n; i++) {
                if (Math.abs(a[i][p]) > Math.abs(a[best][p])) {
                    best = i;
                }
            }
            if (Math.abs(a[best][p]) < 1e-12) {
                throw new ArithmeticException("matrix is singular");
            }
            double[] row = a[p];
            a[p] = a[best];
            a[best] = row;
            double t = x[p];
            x[p] = x[best];
            x[best] = t;
            for (int i = p + 1; i < n; i++) {
                double factor = a[i][p] / a[p][p];
                x[i] -= factor * x[p];
                for (int j = p; j < n; j++) {
                    a[i][j] -= factor * a[p][j];
                }
            }
        }
        for (int i = n - 1; i >= 0; i--) {
            double sum = x[i];
            for (int j = i + 1; j < n; j++) {
                sum -= a[i][j] * x[j];
            }
            x[i] = sum / a[i][i];
        }
        return x;
    }

    public static void main(String[] args) {
        DenseMatrix a = DenseMatrix.of(new double[][] {
            {4, -2, 1},
            {-2, 4, -2},
            {1, -2, 4},
        });
        double[] x = a.solve(new double[] {11, -16, 17});
        System.out.println("x = " + Arrays.toString(x));
        DenseMatrix g = a.transpose().times(a);
        System.out.println("g[0][0] = " + g.get(0, 0));
        DenseMatrix same = identity(3).times(a);
        System.out.println("I*a == a: " + (same.get(2, 1) == a.get(2, 1)));
    }
}
