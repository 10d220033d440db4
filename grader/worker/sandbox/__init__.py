"""The Linux isolation layers a worker is put inside: namespaces, mounts, Landlock, capabilities
(``isolate`` over the system calls of ``linux``) and the pids cgroup (``cgroup``)."""
