//go:build !linux

package rawio

import "syscall"

const rawSupported = false

// rawWrite and rawRead are never called where raw is false.
func rawWrite(uintptr, []byte) (int, syscall.Errno) { return 0, syscall.EINVAL }
func rawRead(uintptr, []byte) (int, syscall.Errno)  { return 0, syscall.EINVAL }
