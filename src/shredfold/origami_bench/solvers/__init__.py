"""Reference solvers of OrigamiBench: the MCQ picker, the fold search and the agents that play with them."""
