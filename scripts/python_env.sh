# scripts/python_env.sh — sourced (from the repository root) by setup.sh, demo.sh and test.sh:
# which Python they use.
#
#   PYTHON unset (the default): the virtual environment in the repository, $SG_VENV (default
#       .venv, ignored by git), which setup.sh makes from $SG_VENV_FROM (default python3; on a
#       stock Debian or Ubuntu that is the system's externally-managed /usr/bin/python3).
#   PYTHON=INTERPRETER: that interpreter's own environment (a conda or pyenv Python, a venv you
#       made), used as it is.
#
# Sets PYTHON (an absolute path when it is the repository's environment) and SG_USE_VENV (1 or 0).
SG_VENV=${SG_VENV:-.venv}
SG_VENV_FROM=${SG_VENV_FROM:-python3}
if [ -n "${PYTHON:-}" ]; then
    SG_USE_VENV=0
else
    SG_USE_VENV=1
    case "$SG_VENV" in
        /*) PYTHON="$SG_VENV/bin/python" ;;
        *) PYTHON="$(pwd)/$SG_VENV/bin/python" ;;
    esac
fi
