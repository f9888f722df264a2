"""Analysis stages: timeline triage, ranks, kernels, roofline, mechanisms, and the decision."""
