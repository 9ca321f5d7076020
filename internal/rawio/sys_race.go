//go:build linux && race

package rawio

import "syscall"

const rawSupported = true

// Under the race detector the calls go through package syscall, whose
// Read and Write tell the detector that bytes written to a descriptor
// happen before they are read from it (a test's server and its client
// in one process synchronise through their socket). Raw calls carry no
// such annotation, and the detector would take that synchronisation for
// races. Everything else in this package runs the same.

func rawWrite(fd uintptr, p []byte) (int, syscall.Errno) {
	if len(p) == 0 {
		return 0, 0
	}
	n, err := syscall.Write(int(fd), p)
	if err != nil {
		return -1, err.(syscall.Errno)
	}
	return n, 0
}

func rawRead(fd uintptr, p []byte) (int, syscall.Errno) {
	if len(p) == 0 {
		return 0, 0
	}
	n, err := syscall.Read(int(fd), p)
	if err != nil {
		return -1, err.(syscall.Errno)
	}
	return n, 0
}
