package frontier

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestStoreFiles: the store's files are the operating system's, in tmpfs
// without preallocation or fsyncs, and what they hold is what was
// written, through every way Pebble opens a file for writing, on disk and
// in /dev/shm.
func TestStoreFiles(t *testing.T) {
	dirs := []string{t.TempDir()}
	if onTmpfs("/dev/shm") {
		shm, err := os.MkdirTemp("/dev/shm", "gentlecrawl-storefs-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(shm) })
		dirs = append(dirs, shm)
	}
	for _, d := range dirs {
		testStoreFiles(t, filepath.Join(d, "store"))
	}
}

func testStoreFiles(t *testing.T, dir string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fs := storeFS(dir, nil)
	tmpfs := onTmpfs(dir)
	if _, ok := fs.(storeFiles); ok != tmpfs {
		t.Fatalf("store in %s: file system %#v; want tmpfs %v", dir, fs, tmpfs)
	}
	var want []byte
	for i := range 50 {
		want = append(want, bytes.Repeat([]byte{byte(i)}, 1000+i*37)...)
	}
	open := map[string]func(string) (vfs.File, error){
		"Create": func(name string) (vfs.File, error) { return fs.Create(name, vfs.WriteCategoryUnspecified) },
		"ReuseForWrite": func(name string) (vfs.File, error) {
			f, err := fs.Create(name+".old", vfs.WriteCategoryUnspecified)
			if err != nil {
				return nil, err
			}
			f.Close()
			return fs.ReuseForWrite(name+".old", name, vfs.WriteCategoryUnspecified)
		},
		"OpenReadWrite": func(name string) (vfs.File, error) {
			return fs.OpenReadWrite(name, vfs.WriteCategoryUnspecified)
		},
	}
	for how, openFn := range open {
		name := filepath.Join(dir, how)
		f, err := openFn(name)
		if err != nil {
			t.Fatal(how, err)
		}
		if _, isStore := f.(storeFile); isStore != tmpfs {
			t.Errorf("%s: file %T in tmpfs %v", how, f, tmpfs)
		}
		for p := want; len(p) > 0; {
			n := min(len(p), 4096)
			if m, err := f.Write(p[:n]); m != n || err != nil {
				t.Fatalf("%s: Write = %d, %v", how, m, err)
			}
			p = p[n:]
		}
		if err := f.Sync(); err != nil {
			t.Fatal(how, err)
		}
		if err := f.SyncData(); err != nil {
			t.Fatal(how, err)
		}
		if full, err := f.SyncTo(int64(len(want))); err != nil || tmpfs && !full {
			t.Fatal(how, full, err)
		}
		f.Close()
		r, err := vfs.Default.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(r)
		r.Close()
		if !bytes.Equal(got, want) {
			t.Errorf("%s: file holds %d bytes, want the %d written", how, len(got), len(want))
		}
	}
}

// TestStoreFSDirItself: a store is judged by its own directory, or by
// its nearest existing ancestor when it is not made yet, never by its
// parent when it exists: a tmpfs mounted below a disk directory skips its
// fsyncs, a disk directory below a tmpfs keeps them.
func TestStoreFSDirItself(t *testing.T) {
	if !onTmpfs("/dev/shm") {
		t.Skip("no tmpfs at /dev/shm")
	}
	shm, err := os.MkdirTemp("/dev/shm", "gentlecrawl-storefs-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	if got := nearestExisting(filepath.Join(shm, "not", "made", "yet")); got != shm {
		t.Errorf("nearestExisting = %s, want %s", got, shm)
	}
	if _, ok := storeFS(filepath.Join(shm, "job", "store"), nil).(storeFiles); !ok {
		t.Error("a store to be made in tmpfs keeps its fsyncs")
	}
	if disk := t.TempDir(); !onTmpfs(disk) {
		if _, ok := storeFS(disk, nil).(storeFiles); ok {
			t.Error("a store on disk skips its fsyncs")
		}
	}
}
