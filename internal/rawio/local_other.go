//go:build !linux

package rawio

import (
	"os"
	"syscall"
)

const rawSupported = false

// Local reports false: raw calls are made on Linux only.
func Local(*os.File) bool { return false }

// LocalDir reports false: raw calls are made on Linux only.
func LocalDir(string) bool { return false }

// rawWrite and rawRead are never called where raw is false.
func rawWrite(uintptr, []byte) (int, syscall.Errno) { return 0, syscall.EINVAL }
func rawRead(uintptr, []byte) (int, syscall.Errno)  { return 0, syscall.EINVAL }
