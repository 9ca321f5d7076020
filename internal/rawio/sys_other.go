//go:build !linux

package rawio

import "syscall"

const rawSupported = false

// rawWrite and rawRead are never called where Raw reports false.
func rawWrite(uintptr, []byte) (int, syscall.Errno) { return 0, syscall.EINVAL }
func rawRead(uintptr, []byte) (int, syscall.Errno)  { return 0, syscall.EINVAL }
