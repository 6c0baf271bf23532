// The pod sandbox ("pause") image's one program: hold the pod's namespaces open until stopped.
//
// The local cluster cannot pull registry.k8s.io/pause, so scripts/local-cluster.sh builds this
// into a one-file image. As PID 1 of the sandbox it exits on SIGINT or SIGTERM and reaps any
// orphan that ends up as its child (a pod that shares its process namespace).
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for received := range signals {
		if received != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
