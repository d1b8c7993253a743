// sless-build-tools: the two steps of a function build that run no tenant code, around kaniko (which
// does, in the function's RUN steps). See src/platform/kubernetes/README.md, "Builds".
//
//	sless-build-tools fetch -url <presigned GET> -out /workspace/context.tar.gz [-cache-repo R -cache-dir D] [-deps-repo ... (deps.go)]
//	sless-build-tools push  -tarball /out/image.tar -destination <repo:tag> -digest-file F [-cache-repo R -cache-dir D]
//	sless-build-tools append -url <presigned GET> -workdir /workspace -destination <repo:tag> -digest-file F  (append.go)
//	sless-build-tools delete -repository R [-repository ...]  (delete.go: every tag of R, a closed preview's images)
//
// fetch downloads the build context (kaniko then needs no S3 credentials) and copies the function's layer
// cache repository R into D as kaniko's OCI-layout cache (`--cache-repo=oci:D`: one layout per cache
// key, at D:<key>, beside D; the folder holding them is created 0755 here, so only root, i.e. kaniko
// itself, and this tool write there, not the install steps kaniko runs as user 10001).
// push pushes the image kaniko wrote as a tarball (kaniko never holds push credentials), writes its
// digest to F (the pod's termination message), then pushes the cache entries kaniko added to D.
// Registry credentials: $DOCKER_CONFIG/config.json, as docker and kaniko read them.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// pulledList names the cache keys fetch brought, so push sends only what kaniko added.
const pulledList = ".pulled"

func main() {
	if len(os.Args) < 2 {
		fail(errors.New("usage: sless-build-tools fetch|push|append|delete [flags]"))
	}
	var err error
	switch os.Args[1] {
	case "fetch":
		err = fetch(os.Args[2:])
	case "push":
		err = push(os.Args[2:])
	case "append":
		err = appendImage(os.Args[2:])
	case "delete":
		err = deleteImages(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q (fetch, push, append, delete)", os.Args[1])
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "sless-build-tools: %v\n", err)
	os.Exit(1)
}

func remoteOptions() []remote.Option {
	return []remote.Option{remote.WithAuthFromKeychain(authn.DefaultKeychain)}
}

func fetch(args []string) error {
	fs := flag.NewFlagSet("fetch", flag.ExitOnError)
	url := fs.String("url", "", "build context URL (a presigned GET)")
	out := fs.String("out", "", "where to write it")
	cacheRepo := fs.String("cache-repo", "", "layer cache repository to copy into -cache-dir")
	cacheDir := fs.String("cache-dir", "", "kaniko's OCI-layout cache folder")
	depsRepo := fs.String("deps-repo", "", "a dependencies build (deps.go): the repository of the dependencies images")
	depsDockerfile := fs.String("deps-dockerfile", "Dockerfile.dependencies", "a dependencies build: the context's Dockerfile of the dependencies image")
	kanikoContext := fs.String("kaniko-context", "", "a dependencies build: where kaniko's context goes")
	depsOut := fs.String("deps-out", "", "a dependencies build: where the decision for append goes")
	_ = fs.Parse(args)
	if *url == "" || *out == "" {
		return errors.New("fetch needs -url and -out")
	}
	if *depsRepo != "" && (*kanikoContext == "" || *depsOut == "") {
		return errors.New("fetch -deps-repo needs -kaniko-context and -deps-out")
	}
	if err := download(*url, *out); err != nil {
		return err
	}
	if *depsRepo != "" {
		exists, err := findDependencies(*out, *depsDockerfile, *depsRepo, *kanikoContext, *depsOut)
		if err != nil || exists {
			// Nothing for kaniko to build: its layer cache is not needed either.
			return err
		}
	}
	if *cacheRepo == "" || *cacheDir == "" {
		return nil
	}
	return pullCache(*cacheRepo, *cacheDir)
}

func download(url, out string) error {
	client := &http.Client{Timeout: 10 * time.Minute}
	resp, err := client.Get(url)
	if err != nil {
		// The URL carries a signature: never print it.
		return fmt.Errorf("fetching the build context: %v", redact(err, url))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("fetching the build context: HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing the build context to %s: %w", out, err)
	}
	fmt.Printf("build context: %d bytes\n", n)
	return nil
}

func redact(err error, secret string) string {
	msg := err.Error()
	if i := strings.Index(secret, "?"); i >= 0 {
		msg = strings.ReplaceAll(msg, secret, secret[:i]+"?<redacted>")
	}
	return msg
}

// pullCache copies every tag of repo into <dir>:<tag>. A missing repository is an empty cache.
func pullCache(repo, dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	r, err := name.NewRepository(repo)
	if err != nil {
		return fmt.Errorf("cache repository %q: %w", repo, err)
	}
	tags, err := remote.List(r, remoteOptions()...)
	if err != nil {
		fmt.Printf("layer cache %s: empty (%v)\n", repo, err)
		tags = nil
	}
	sort.Strings(tags)
	var pulled []string
	for _, tag := range tags {
		img, err := remote.Image(r.Tag(tag), remoteOptions()...)
		if err != nil {
			fmt.Printf("layer cache %s:%s: skipped (%v)\n", repo, tag, err)
			continue
		}
		if err := writeLayout(dir+":"+tag, img); err != nil {
			return err
		}
		pulled = append(pulled, tag)
	}
	fmt.Printf("layer cache %s: %d entries\n", repo, len(pulled))
	return os.WriteFile(dir+pulledList, []byte(strings.Join(pulled, "\n")), 0o644)
}

func writeLayout(path string, img v1.Image) error {
	p, err := layout.Write(path, empty.Index)
	if err != nil {
		return err
	}
	return p.AppendImage(img)
}

func push(args []string) error {
	fs := flag.NewFlagSet("push", flag.ExitOnError)
	tarPath := fs.String("tarball", "", "image tarball kaniko wrote (--tar-path)")
	dest := fs.String("destination", "", "image reference to push to")
	digestFile := fs.String("digest-file", "", "where to write the pushed digest")
	cacheRepo := fs.String("cache-repo", "", "layer cache repository to push new entries of -cache-dir to")
	cacheDir := fs.String("cache-dir", "", "kaniko's OCI-layout cache folder")
	_ = fs.Parse(args)
	if *tarPath == "" || *dest == "" {
		return errors.New("push needs -tarball and -destination")
	}
	ref, err := name.NewTag(*dest)
	if err != nil {
		return fmt.Errorf("destination %q: %w", *dest, err)
	}
	img, err := tarball.ImageFromPath(*tarPath, nil)
	if err != nil {
		return fmt.Errorf("reading %s: %w", *tarPath, err)
	}
	if *cacheRepo != "" && *cacheDir != "" {
		// Before the image: a cache entry that fails to push costs a later build time, never this one.
		if err := pushCache(*cacheRepo, *cacheDir); err != nil {
			fmt.Printf("layer cache: %v\n", err)
		}
	}
	if err := remote.Write(ref, img, remoteOptions()...); err != nil {
		return fmt.Errorf("pushing %s: %w", ref, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("pushed %s@%s\n", ref, digest)
	if *digestFile != "" {
		return os.WriteFile(*digestFile, []byte(digest.String()), 0o644)
	}
	return nil
}

func pushCache(repo, dir string) error {
	r, err := name.NewRepository(repo)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	if b, err := os.ReadFile(dir + pulledList); err == nil {
		for _, t := range strings.Split(string(b), "\n") {
			seen[t] = true
		}
	}
	entries, err := os.ReadDir(filepath.Dir(dir))
	if err != nil {
		return err
	}
	prefix := filepath.Base(dir) + ":"
	pushed := 0
	for _, e := range entries {
		tag, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.IsDir() || seen[tag] {
			continue
		}
		p, err := layout.FromPath(filepath.Join(filepath.Dir(dir), e.Name()))
		if err != nil {
			return err
		}
		idx, err := p.ImageIndex()
		if err != nil {
			return err
		}
		m, err := idx.IndexManifest()
		if err != nil || len(m.Manifests) == 0 {
			continue
		}
		img, err := p.Image(m.Manifests[len(m.Manifests)-1].Digest)
		if err != nil {
			return err
		}
		if err := remote.Write(r.Tag(tag), img, remoteOptions()...); err != nil {
			return fmt.Errorf("pushing cache entry %s: %w", tag, err)
		}
		pushed++
	}
	fmt.Printf("layer cache %s: %d new entries pushed\n", repo, pushed)
	return nil
}
