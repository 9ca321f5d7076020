package frontier

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/gentlecrawl/gentlecrawl/internal/rawio"
)

// TestStoreFilesWriteRaw: on a local file system the store's files are
// written by raw system calls (package rawio), in tmpfs without fsyncs,
// and what they hold is what was written, through every way Pebble opens
// a file for writing, on disk and in /dev/shm.
func TestStoreFilesWriteRaw(t *testing.T) {
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
	tmpfs, raw := onTmpfs(dir), rawio.Raw() && rawio.LocalDir(dir)
	sf, ok := fs.(storeFiles)
	if ok != (tmpfs || raw) || ok && (sf.tmpfs != tmpfs || sf.raw != raw) {
		t.Fatalf("store in %s: file system %#v; want tmpfs %v, raw %v", dir, fs, tmpfs, raw)
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
		if ok && sf.raw {
			if s, isStore := f.(storeFile); !isStore || !s.raw {
				t.Errorf("%s: file %T not written raw", how, f)
			}
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
