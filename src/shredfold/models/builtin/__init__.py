"""Built-in models: reference solvers that run offline and see the same requests as APIs."""
