"""The fork server: the warm template process that forks sandboxed workers for the judge."""
