"""The REPL supervisor's modules; `supervisor.py` (the container's main process) runs
`event_loop.Supervisor`. See ../README.md for the protocol and the module map."""
