#!/bin/bash
# the reward is the hidden checks' verdict: 1 when every one passes
if python3 -m pytest -q -p no:cacheprovider /tests/test_state.py; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
