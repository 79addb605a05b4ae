"""Running checks: deadlines and cancellation (budget), worker threads (runner), the
share of the machine each call gets (admission, solver slots), and bounded caches."""
