//go:build !linux

package frontier

func onTmpfs(string) bool { return false }
