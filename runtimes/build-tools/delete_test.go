package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

func pushRandom(t *testing.T, refs ...string) {
	t.Helper()
	img, _ := random.Image(64, 1)
	for _, r := range refs {
		if err := remote.Write(ref(t, r), img); err != nil {
			t.Fatal(err)
		}
	}
}

func tagsOf(t *testing.T, repo string) []string {
	t.Helper()
	r, err := name.NewRepository(repo)
	if err != nil {
		t.Fatal(err)
	}
	tags, err := listTags(r)
	if err != nil {
		t.Fatal(err)
	}
	return tags
}

// Every tag of the named repositories goes (two tags of one manifest included); a repository the
// registry does not know is nothing to delete; other repositories keep theirs.
func TestDeleteRemovesEveryTagOfTheRepositories(t *testing.T) {
	reg := httptest.NewServer(registry.New())
	defer reg.Close()
	host := strings.TrimPrefix(reg.URL, "http://")
	preview := host + "/team-pr-7-api"
	pushRandom(t, preview+":aaaa", preview+":bbbb")
	pushRandom(t, preview+":cccc")
	pushRandom(t, preview+"/deps:dddd")
	pushRandom(t, preview+"/cache:eeee")
	production := host + "/team-api"
	pushRandom(t, production+":aaaa")

	err := deleteImages([]string{"-repository", preview, "-repository", preview + "/deps", "-repository", preview + "/cache", "-repository", host + "/team-pr-7-never-built"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{preview, preview + "/deps", preview + "/cache"} {
		if tags := tagsOf(t, r); len(tags) != 0 {
			t.Fatalf("%s still has %v", r, tags)
		}
	}
	if tags := tagsOf(t, production); len(tags) != 1 {
		t.Fatalf("production's repository lost its tag: %v", tags)
	}
	// Nothing left: deleting again is no error.
	if err := deleteImages([]string{"-repository", preview}); err != nil {
		t.Fatal(err)
	}
}

// A registry without deletes answers 405: said once, not an error (a retry would change nothing), and
// the other repositories are not asked again.
func TestDeleteOnARegistryThatRefusesDeletes(t *testing.T) {
	var deletes atomic.Int32
	inner := registry.New()
	reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			deletes.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusMethodNotAllowed)
			_, _ = w.Write([]byte(`{"errors":[{"code":"UNSUPPORTED","message":"The operation is unsupported."}]}`))
			return
		}
		inner.ServeHTTP(w, r)
	}))
	defer reg.Close()
	host := strings.TrimPrefix(reg.URL, "http://")
	pushRandom(t, host+"/team-pr-7-api:aaaa")
	pushRandom(t, host+"/team-pr-7-web:bbbb")

	r, _ := name.NewRepository(host + "/team-pr-7-api")
	if _, err := deleteRepository(r.String()); err != errDeletesRefused {
		t.Fatalf("deleteRepository: %v, want errDeletesRefused", err)
	}
	if !strings.Contains(errDeletesRefused.Error(), "REGISTRY_STORAGE_DELETE_ENABLED") {
		t.Fatalf("the refusal does not say what to turn on: %v", errDeletesRefused)
	}
	deletes.Store(0)
	if err := deleteImages([]string{"-repository", host + "/team-pr-7-api", "-repository", host + "/team-pr-7-web"}); err != nil {
		t.Fatalf("a refusal is not an error: %v", err)
	}
	if n := deletes.Load(); n != 1 {
		t.Fatalf("%d DELETEs after the registry refused the first, want 1", n)
	}
	if tags := tagsOf(t, host+"/team-pr-7-web"); len(tags) != 1 {
		t.Fatalf("tags changed: %v", tags)
	}
}

// Other failures (here: 403) are errors that name the repository.
func TestDeleteFailureNamesTheRepository(t *testing.T) {
	reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
	}))
	defer reg.Close()
	host := strings.TrimPrefix(reg.URL, "http://")
	err := deleteImages([]string{"-repository", host + "/team-pr-7-api"})
	if err == nil || !strings.Contains(err.Error(), "team-pr-7-api") {
		t.Fatalf("err = %v", err)
	}
	if err := deleteImages(nil); err == nil || !strings.Contains(err.Error(), "-repository") {
		t.Fatalf("no repository: %v", err)
	}
}
