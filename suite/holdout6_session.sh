#!/usr/bin/env bash
# Capture suite/holdout6.toml on the lent H200 (blind set 7): bash suite/holdout6_session.sh cuda|python
# (suite/holdout_session.sh does it; these are the deadlines the campaign ran with).
CUDA_DEADLINE=${CUDA_DEADLINE:-300} PYTHON_DEADLINE=${PYTHON_DEADLINE:-380} exec bash "$(dirname "$0")/holdout_session.sh" 6 "$@"
