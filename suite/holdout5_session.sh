#!/usr/bin/env bash
# Capture suite/holdout5.toml on the lent H200 (issue 10): bash suite/holdout5_session.sh cuda|python
# (suite/holdout_session.sh does it; these are the deadlines the campaign ran with).
CUDA_DEADLINE=${CUDA_DEADLINE:-400} PYTHON_DEADLINE=${PYTHON_DEADLINE:-380} exec bash "$(dirname "$0")/holdout_session.sh" 5 "$@"
