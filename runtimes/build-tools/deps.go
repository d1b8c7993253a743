// A function that installs dependencies is built in two images (src/build/build-kind.ts, `dependencies`):
// the dependencies image (the context's Dockerfile.dependencies: the base and the install steps) and
// the code appended onto it (Dockerfile.code, as append does for a function without dependencies). The
// dependencies image is built by kaniko once: its tag hashes Dockerfile.dependencies (the base image and
// the install commands) and the dependency files it copies, so a code-only change finds it in the
// registry and kaniko is handed a context with nothing to build.
//
//	fetch ... -deps-repo R -deps-dockerfile Dockerfile.dependencies -kaniko-context K -deps-out F
//	append -context C -dockerfile Dockerfile.code -dependencies F -tarball T -destination D -digest-file F2 [-cache-repo -cache-dir]
package main

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// What fetch found, for append: the line "build" when kaniko builds the dependencies image, "exists" when
// the registry has it.
const (
	depsBuild  = "build"
	depsExists = "exists"
)

// dependenciesTag is the dependencies image's tag for a context: sha256 over its dependencies
// Dockerfile and, by name, the files that Dockerfile copies (40 hex, as the function images' tags).
func dependenciesTag(contextPath, dockerfileName string) (string, error) {
	dockerfile, err := contextFile(contextPath, dockerfileName)
	if err != nil {
		return "", err
	}
	sources, err := copySources(dockerfile)
	if err != nil {
		return "", err
	}
	want := map[string]bool{}
	for _, s := range sources {
		want[s] = true
	}
	found := map[string][]byte{}
	err = walkContext(contextPath, func(h *tar.Header, r io.Reader) (bool, error) {
		p := strings.TrimPrefix(h.Name, "./")
		if !want[p] || h.Typeflag != tar.TypeReg {
			return false, nil
		}
		b, err := io.ReadAll(io.LimitReader(r, 64<<20))
		found[p] = b
		return false, err
	})
	if err != nil {
		return "", err
	}
	sort.Strings(sources)
	sum := sha256.New()
	fmt.Fprintf(sum, "%s:%d\n%s", dockerfileName, len(dockerfile), dockerfile)
	for _, s := range sources {
		b, ok := found[s]
		if !ok {
			return "", fmt.Errorf("%s copies %s, which the build context lacks", dockerfileName, s)
		}
		fmt.Fprintf(sum, "%s:%d\n", s, len(b))
		sum.Write(b)
	}
	return hex.EncodeToString(sum.Sum(nil))[:40], nil
}

// copySources lists the context files the Dockerfile's COPY instructions read (flags skipped, the last
// argument being the destination).
func copySources(dockerfile string) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(dockerfile))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || !strings.EqualFold(fields[0], "COPY") {
			continue
		}
		var args []string
		for _, a := range fields[1:] {
			if !strings.HasPrefix(a, "--") {
				args = append(args, a)
			}
		}
		if len(args) < 2 {
			return nil, fmt.Errorf("COPY line %q: no source", sc.Text())
		}
		for _, s := range args[:len(args)-1] {
			if !cleanRelative(s) {
				return nil, fmt.Errorf("COPY line %q: source %q is not a clean relative path", sc.Text(), s)
			}
			out = append(out, s)
		}
	}
	return out, nil
}

// findDependencies decides a dependencies build: the image `repo:<tag>` is in the registry (kaniko gets
// a context with nothing to build) or not (kaniko builds the context's dependencies Dockerfile). It
// writes kaniko's context to kanikoContext and the decision to out.
func findDependencies(contextPath, dockerfileName, repo, kanikoContext, out string) (exists bool, err error) {
	tag, err := dependenciesTag(contextPath, dockerfileName)
	if err != nil {
		return false, err
	}
	r, err := name.NewRepository(repo)
	if err != nil {
		return false, fmt.Errorf("dependencies repository %q: %w", repo, err)
	}
	ref := r.Tag(tag)
	_, herr := remote.Head(ref, remoteOptions()...)
	exists = herr == nil
	var terr *transport.Error
	switch {
	case exists:
		fmt.Printf("dependencies image %s: in the registry, nothing for kaniko to build\n", ref)
		err = writeNothingToBuild(kanikoContext, dockerfileName)
	case errors.As(herr, &terr) && terr.StatusCode == http.StatusNotFound:
		fmt.Printf("dependencies image %s: not in the registry, kaniko builds it\n", ref)
		err = linkOrCopy(contextPath, kanikoContext)
	default:
		// Not known to be there: build it; a registry that cannot answer will fail the push with its reason.
		fmt.Printf("dependencies image %s: not found (%v), kaniko builds it\n", ref, herr)
		err = linkOrCopy(contextPath, kanikoContext)
	}
	if err != nil {
		return exists, err
	}
	state := depsBuild
	if exists {
		state = depsExists
	}
	return exists, os.WriteFile(out, []byte(ref.String()+"\n"+state+"\n"), 0o644)
}

// writeNothingToBuild is a context whose Dockerfile is `FROM scratch`: kaniko unpacks nothing and writes
// an empty image, which append ignores.
func writeNothingToBuild(path, dockerfileName string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	body := []byte("# The dependencies image is in the registry: nothing to build (sless-build-tools fetch).\nFROM scratch\n")
	if err := tw.WriteHeader(&tar.Header{Name: dockerfileName, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
		f.Close()
		return err
	}
	if _, err := tw.Write(body); err != nil {
		f.Close()
		return err
	}
	for _, c := range []io.Closer{tw, gz, f} {
		if err := c.Close(); err != nil {
			return err
		}
	}
	return nil
}

func linkOrCopy(from, to string) error {
	if err := os.Link(from, to); err == nil {
		return nil
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// readDependencies reads fetch's decision: the dependencies image and whether kaniko built it.
func readDependencies(path string) (ref name.Tag, built bool, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return ref, false, fmt.Errorf("the dependencies decision of the fetch step: %w", err)
	}
	lines := strings.Fields(string(b))
	if len(lines) != 2 || (lines[1] != depsBuild && lines[1] != depsExists) {
		return ref, false, fmt.Errorf("%s: want `<image>\\n%s|%s`, got %q", path, depsBuild, depsExists, string(b))
	}
	ref, err = name.NewTag(lines[0])
	if err != nil {
		return ref, false, fmt.Errorf("%s: %w", path, err)
	}
	return ref, lines[1] == depsBuild, nil
}

// pushedDependencies is the dependencies image append builds on: pushed first (with kaniko's new layer
// cache entries) when kaniko built it in this Job.
func pushedDependencies(decision, tarPath, cacheRepo, cacheDir string) (string, error) {
	ref, built, err := readDependencies(decision)
	if err != nil || !built {
		if err == nil {
			fmt.Printf("dependencies image %s: from the registry\n", ref)
		}
		return ref.String(), err
	}
	if tarPath == "" {
		return "", errors.New("append -dependencies: kaniko built the dependencies image, and no -tarball names it")
	}
	img, err := tarball.ImageFromPath(tarPath, nil)
	if err != nil {
		return "", fmt.Errorf("reading the dependencies image %s: %w", tarPath, err)
	}
	if cacheRepo != "" && cacheDir != "" {
		if err := pushCache(cacheRepo, cacheDir); err != nil {
			fmt.Printf("layer cache: %v\n", err)
		}
	}
	if err := remote.Write(ref, img, remoteOptions()...); err != nil {
		return "", fmt.Errorf("pushing the dependencies image %s: %w", ref, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return "", err
	}
	fmt.Printf("pushed dependencies image %s@%s\n", ref, digest)
	return ref.String(), nil
}
