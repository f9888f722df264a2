#!/usr/bin/env bash
# Capture suite/holdout8.toml on the lent H200 (blind set 14): bash suite/holdout8_session.sh cuda|python
# (suite/holdout_session.sh does it; these are the deadlines the campaign runs with).
CUDA_DEADLINE=${CUDA_DEADLINE:-240} PYTHON_DEADLINE=${PYTHON_DEADLINE:-300} exec bash "$(dirname "$0")/holdout_session.sh" 8 "$@"
