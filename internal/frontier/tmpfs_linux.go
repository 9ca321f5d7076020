package frontier

import "syscall"

// onTmpfs reports whether path is in a tmpfs file system.
func onTmpfs(path string) bool {
	const tmpfsMagic = 0x01021994
	var st syscall.Statfs_t
	return syscall.Statfs(path, &st) == nil && st.Type == tmpfsMagic
}
