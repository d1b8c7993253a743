package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// A registry in memory, a build context served over HTTP: fetch brings the context and the cache,
// push sends the image (digest to the file) and only the cache entries kaniko added.
func TestFetchAndPush(t *testing.T) {
	reg := httptest.NewServer(registry.New())
	defer reg.Close()
	host := strings.TrimPrefix(reg.URL, "http://")
	ctxSrv := httptest.NewServer(httpFile("context bytes"))
	defer ctxSrv.Close()
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache", "kaniko", "layers")
	cacheRepo := host + "/team-fn/cache"

	// One entry already in the function's cache repository.
	old, _ := random.Image(64, 1)
	if err := remote.Write(ref(t, cacheRepo+":old"), old); err != nil {
		t.Fatal(err)
	}
	if err := fetch([]string{"-url", ctxSrv.URL + "/ctx.tar.gz?X-Amz-Signature=secret", "-out", filepath.Join(dir, "ctx"), "-cache-repo", cacheRepo, "-cache-dir", cache}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "ctx")); string(b) != "context bytes" {
		t.Fatalf("context: %q", b)
	}
	if _, err := os.Stat(cache + ":old"); err != nil {
		t.Fatalf("the existing cache entry was not copied: %v", err)
	}
	if fi, _ := os.Stat(filepath.Dir(cache)); fi.Mode().Perm() != 0o755 {
		t.Fatalf("cache folder mode %v, want 0755 (not writable by the install user)", fi.Mode().Perm())
	}

	// kaniko adds an entry and writes the image tarball.
	added, _ := random.Image(64, 1)
	if err := writeLayout(cache+":new", added); err != nil {
		t.Fatal(err)
	}
	img, _ := random.Image(128, 2)
	dest := host + "/team-fn:abc"
	tarPath := filepath.Join(dir, "image.tar")
	if err := tarball.WriteToFile(tarPath, ref(t, dest), img); err != nil {
		t.Fatal(err)
	}
	digestFile := filepath.Join(dir, "digest")
	if err := push([]string{"-tarball", tarPath, "-destination", dest, "-digest-file", digestFile, "-cache-repo", cacheRepo, "-cache-dir", cache}); err != nil {
		t.Fatal(err)
	}
	want, _ := img.Digest()
	if b, _ := os.ReadFile(digestFile); string(b) != want.String() {
		t.Fatalf("digest file %q, want %s", b, want)
	}
	got, err := remote.Head(ref(t, dest))
	if err != nil || got.Digest != want {
		t.Fatalf("registry has %v (%v), want %s", got, err, want)
	}
	tags, _ := remote.List(ref(t, cacheRepo).Context())
	if strings.Join(tags, ",") != "new,old" {
		t.Fatalf("cache tags %v, want new,old", tags)
	}
}

func TestFetchNeverPrintsTheSignature(t *testing.T) {
	err := download("http://127.0.0.1:1/ctx.tar.gz?X-Amz-Signature=topsecret", filepath.Join(t.TempDir(), "x"))
	if err == nil || strings.Contains(err.Error(), "topsecret") {
		t.Fatalf("error %v", err)
	}
}

type httpFile string

func (f httpFile) ServeHTTP(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(f)) }

func ref(t *testing.T, s string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
