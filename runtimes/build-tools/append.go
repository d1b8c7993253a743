// append: the build of a function whose image is its base image plus its code, and nothing to run
// (a generated Dockerfile without RUN: Node.js or Python without dependency files). kaniko would unpack
// the whole base image to copy the code over it (most of such a build's time); this reads the same
// Dockerfile and does what it says without unpacking anything: one layer with the code, the config
// changes, the base image's layers reused by reference.
//
//	sless-build-tools append -url <presigned GET> -workdir /workspace -destination <repo:tag> -digest-file F
//	sless-build-tools append -context C -dockerfile Dockerfile.code -dependencies F -tarball T ... (deps.go)
//
// It runs no tenant code, so the build pod is this one step (README, "Security notes: builds").
package main

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// recipe is what a Dockerfile without RUN says: the base, where the code goes, the config changes.
type recipe struct {
	from    string
	copySrc string // a folder of the context, "function/"
	copyDst string // an absolute folder, "/app/function/"
	workdir string
	env     [][2]string
	user    string
	hasUser bool
}

// parseRecipe reads the Dockerfiles src/build/dockerfile.ts writes when nothing runs: one FROM, WORKDIR,
// one `COPY <folder>/ <abs folder>/`, ENV k=v..., USER. Anything else (RUN, a second stage, flags) is
// refused: such a build is kaniko's.
func parseRecipe(dockerfile string) (recipe, error) {
	var r recipe
	sc := bufio.NewScanner(strings.NewReader(dockerfile))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		word, rest, _ := strings.Cut(line, " ")
		args := strings.Fields(rest)
		bad := func(why string) error {
			return fmt.Errorf("Dockerfile line %d %q: %s (this build needs kaniko)", n, line, why)
		}
		switch strings.ToUpper(word) {
		case "FROM":
			if r.from != "" || len(args) != 1 {
				return r, bad("one single-stage FROM only")
			}
			r.from = args[0]
		case "WORKDIR":
			if len(args) != 1 || !path.IsAbs(args[0]) {
				return r, bad("an absolute WORKDIR only")
			}
			r.workdir = path.Clean(args[0])
		case "COPY":
			if r.copySrc != "" || len(args) != 2 || strings.HasPrefix(args[0], "-") || !strings.HasSuffix(args[0], "/") ||
				!path.IsAbs(args[1]) || !strings.HasSuffix(args[1], "/") || !cleanRelative(strings.TrimSuffix(args[0], "/")) {
				return r, bad("one `COPY <folder>/ <absolute folder>/` only")
			}
			r.copySrc, r.copyDst = args[0], args[1]
		case "ENV":
			for _, kv := range args {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" || strings.ContainsAny(kv, `"'$\`) {
					return r, bad("ENV k=v pairs without quotes or variables only")
				}
				r.env = append(r.env, [2]string{k, v})
			}
		case "USER":
			if len(args) != 1 {
				return r, bad("one USER")
			}
			r.user, r.hasUser = args[0], true
		default:
			return r, bad("not an instruction append performs")
		}
	}
	if r.from == "" || r.copySrc == "" {
		return r, errors.New("Dockerfile: append needs a FROM and a COPY of the code")
	}
	return r, nil
}

func cleanRelative(p string) bool {
	return p != "" && !path.IsAbs(p) && path.Clean(p) == p && p != ".." && !strings.HasPrefix(p, "../")
}

// readContext returns the recipe of the context's Dockerfile `dockerfileName` and writes the code layer
// (the entries under r.copySrc, moved to r.copyDst, root-owned as COPY makes them) as an uncompressed
// tar to layerPath.
func readContext(contextPath, dockerfileName, layerPath string) (recipe, error) {
	dockerfile, err := contextFile(contextPath, dockerfileName)
	if err != nil {
		return recipe{}, err
	}
	r, err := parseRecipe(dockerfile)
	if err != nil {
		return r, err
	}
	in, err := openTarGz(contextPath)
	if err != nil {
		return r, err
	}
	defer in.Close()
	out, err := os.Create(layerPath)
	if err != nil {
		return r, err
	}
	tw := tar.NewWriter(out)
	dst := strings.TrimPrefix(r.copyDst, "/")
	entries := 0
	for {
		h, err := in.tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			out.Close()
			return r, fmt.Errorf("reading the build context: %w", err)
		}
		rel, ok := strings.CutPrefix(strings.TrimPrefix(h.Name, "./"), r.copySrc)
		if !ok && strings.TrimSuffix(h.Name, "/")+"/" != r.copySrc {
			continue
		}
		rel = strings.TrimSuffix(rel, "/")
		if rel != "" && !cleanRelative(rel) {
			out.Close()
			return r, fmt.Errorf("build context entry %q: not a clean relative path", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir, tar.TypeReg, tar.TypeSymlink:
		default:
			out.Close()
			return r, fmt.Errorf("build context entry %q: type %q is not a file, folder or symlink", h.Name, h.Typeflag)
		}
		target := strings.TrimSuffix(path.Join(dst, rel), "/")
		if h.Typeflag == tar.TypeDir {
			target += "/"
		}
		hdr := &tar.Header{Typeflag: h.Typeflag, Name: target, Linkname: h.Linkname, Size: h.Size, Mode: h.Mode & 0o7777, ModTime: h.ModTime, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			out.Close()
			return r, err
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := io.Copy(tw, in.tr); err != nil {
				out.Close()
				return r, err
			}
		}
		entries++
	}
	if err := tw.Close(); err != nil {
		out.Close()
		return r, err
	}
	fmt.Printf("code layer: %d entries under %s\n", entries, r.copyDst)
	return r, out.Close()
}

type tarGz struct {
	f  *os.File
	gz *gzip.Reader
	tr *tar.Reader
}

func (t *tarGz) Close() error { t.gz.Close(); return t.f.Close() }

func openTarGz(p string) (*tarGz, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	gz, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("the build context is not gzip: %w", err)
	}
	return &tarGz{f: f, gz: gz, tr: tar.NewReader(gz)}, nil
}

// walkContext calls visit for each entry of the context until it answers done.
func walkContext(contextPath string, visit func(h *tar.Header, body io.Reader) (done bool, err error)) error {
	in, err := openTarGz(contextPath)
	if err != nil {
		return err
	}
	defer in.Close()
	for {
		h, err := in.tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the build context: %w", err)
		}
		if done, err := visit(h, in.tr); done || err != nil {
			return err
		}
	}
}

func contextFile(contextPath, fileName string) (string, error) {
	var body []byte
	found := false
	err := walkContext(contextPath, func(h *tar.Header, r io.Reader) (bool, error) {
		if strings.TrimPrefix(h.Name, "./") != fileName {
			return false, nil
		}
		b, err := io.ReadAll(io.LimitReader(r, 1<<20))
		body, found = b, true
		return true, err
	})
	if err == nil && !found {
		err = fmt.Errorf("the build context has no %s at its root", fileName)
	}
	return string(body), err
}

// configured applies the recipe's WORKDIR, ENV and USER to the base image's config.
func configured(cfg v1.Config, r recipe) v1.Config {
	if r.workdir != "" {
		cfg.WorkingDir = r.workdir
	}
	env := append([]string(nil), cfg.Env...)
	for _, kv := range r.env {
		replaced := false
		for i, e := range env {
			if strings.HasPrefix(e, kv[0]+"=") {
				env[i], replaced = kv[0]+"="+kv[1], true
			}
		}
		if !replaced {
			env = append(env, kv[0]+"="+kv[1])
		}
	}
	cfg.Env = env
	if r.hasUser {
		cfg.User = r.user
	}
	return cfg
}

func appendImage(args []string) error {
	fs := flag.NewFlagSet("append", flag.ExitOnError)
	url := fs.String("url", "", "build context URL (a presigned GET)")
	workdir := fs.String("workdir", "", "a writable folder for the context (with -url) and the code layer")
	localContext := fs.String("context", "", "the build context, fetched already (instead of -url)")
	dockerfileName := fs.String("dockerfile", "Dockerfile", "the context's Dockerfile to follow")
	deps := fs.String("dependencies", "", "fetch's dependencies decision (deps.go): the code goes onto that image, pushed first from -tarball when kaniko built it")
	tarPath := fs.String("tarball", "", "with -dependencies: the dependencies image kaniko built")
	cacheRepo := fs.String("cache-repo", "", "with -dependencies: layer cache repository to push kaniko's new entries to")
	cacheDir := fs.String("cache-dir", "", "with -dependencies: kaniko's OCI-layout cache folder")
	dest := fs.String("destination", "", "image reference to push to")
	digestFile := fs.String("digest-file", "", "where to write the pushed digest")
	_ = fs.Parse(args)
	if (*url == "") == (*localContext == "") || *workdir == "" || *dest == "" {
		return errors.New("append needs -url or -context, -workdir and -destination")
	}
	ref, err := name.NewTag(*dest)
	if err != nil {
		return fmt.Errorf("destination %q: %w", *dest, err)
	}
	contextPath := *localContext
	if contextPath == "" {
		contextPath = filepath.Join(*workdir, "context.tar.gz")
		if err := download(*url, contextPath); err != nil {
			return err
		}
	}
	layerPath := filepath.Join(*workdir, "code-layer.tar")
	r, err := readContext(contextPath, *dockerfileName, layerPath)
	if err != nil {
		return err
	}
	if *deps != "" {
		base, err := pushedDependencies(*deps, *tarPath, *cacheRepo, *cacheDir)
		if err != nil {
			return err
		}
		r.from = base
	}
	img, err := appended(r, layerPath)
	if err != nil {
		return err
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

// appended is the recipe's base image (for this machine's platform) plus the code layer and the config.
func appended(r recipe, layerPath string) (v1.Image, error) {
	baseRef, err := name.ParseReference(r.from)
	if err != nil {
		return nil, fmt.Errorf("FROM %q: %w", r.from, err)
	}
	platform := v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
	base, err := remote.Image(baseRef, append(remoteOptions(), remote.WithPlatform(platform))...)
	if err != nil {
		return nil, fmt.Errorf("reading the base image %s: %w", r.from, err)
	}
	mt, err := base.MediaType()
	if err != nil {
		return nil, err
	}
	layerType := types.DockerLayer
	if mt == types.OCIManifestSchema1 {
		layerType = types.OCILayer
	}
	layer, err := tarball.LayerFromFile(layerPath, tarball.WithMediaType(layerType))
	if err != nil {
		return nil, err
	}
	img, err := mutate.Append(base, mutate.Addendum{Layer: layer, History: v1.History{CreatedBy: "COPY " + r.copySrc + " " + r.copyDst, Comment: "sless-build-tools append"}})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	return mutate.Config(img, configured(cf.Config, r))
}
