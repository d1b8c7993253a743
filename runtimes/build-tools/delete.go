// sless-build-tools delete: removes every tag of the given repositories (a closed preview's images, their
// dependencies images and layer cache; docs/previews.md "Removal").
//
//	sless-build-tools delete -repository <registry>/<ns>-pr-<N>-<fn> [-repository ...]
//
// Per repository: list its tags, HEAD each for its manifest digest, DELETE /v2/<name>/manifests/<digest>
// once per digest (the Docker registry also drops every tag that named it), then DELETE by tag whatever a
// registry still lists (OCI distribution 1.1 registries that keep tags of a deleted manifest). A missing
// repository has nothing to delete. A registry that refuses deletes (405 UNSUPPORTED: the Docker registry
// without REGISTRY_STORAGE_DELETE_ENABLED) is said once, clearly, and is not an error: nothing would change
// on a retry. The blobs stay until the registry's own garbage collection removes them.
package main

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// errDeletesRefused: the registry answered 405 to a DELETE.
var errDeletesRefused = errors.New("the registry refuses deletes (REGISTRY_STORAGE_DELETE_ENABLED is not true on a Docker registry); the images stay")

type repositoriesFlag []string

func (r *repositoriesFlag) String() string     { return strings.Join(*r, ",") }
func (r *repositoriesFlag) Set(v string) error { *r = append(*r, v); return nil }

func deleteImages(args []string) error {
	fs := flag.NewFlagSet("delete", flag.ExitOnError)
	var repos repositoriesFlag
	fs.Var(&repos, "repository", "a repository whose tags all go (repeatable)")
	_ = fs.Parse(args)
	if len(repos) == 0 {
		return errors.New("delete needs at least one -repository")
	}
	var failed []string
	for _, repo := range repos {
		n, err := deleteRepository(repo, remoteOptions()...)
		if errors.Is(err, errDeletesRefused) {
			// Every repository of one registry answers the same: say it once.
			fmt.Printf("%s: %v\n", repo, err)
			return nil
		}
		if err != nil {
			fmt.Printf("%s: %v\n", repo, err)
			failed = append(failed, repo)
			continue
		}
		fmt.Printf("%s: %d tags deleted\n", repo, n)
	}
	if len(failed) > 0 {
		return fmt.Errorf("could not delete the images of %s (see above)", strings.Join(failed, ", "))
	}
	return nil
}

// deleteRepository deletes every tag of repo; answers how many there were.
func deleteRepository(repo string, opts ...remote.Option) (int, error) {
	r, err := name.NewRepository(repo)
	if err != nil {
		return 0, fmt.Errorf("repository %q: %w", repo, err)
	}
	tags, err := listTags(r, opts...)
	if err != nil || len(tags) == 0 {
		return 0, err
	}
	digests := map[string]bool{}
	for _, tag := range tags {
		desc, err := remote.Head(r.Tag(tag), opts...)
		if statusOf(err) == http.StatusNotFound {
			continue // gone meanwhile
		}
		if err != nil {
			return 0, fmt.Errorf("reading %s:%s: %w", repo, tag, err)
		}
		digests[desc.Digest.String()] = true
	}
	for _, d := range sortedKeys(digests) {
		if err := deleteManifest(r.Digest(d), opts...); err != nil {
			return 0, err
		}
	}
	// Registries that keep a deleted manifest's tags (the spec allows both) are asked by tag.
	left, err := listTags(r, opts...)
	if err != nil {
		return 0, err
	}
	for _, tag := range left {
		if err := deleteManifest(r.Tag(tag), opts...); err != nil {
			return 0, err
		}
	}
	return len(tags), nil
}

func deleteManifest(ref name.Reference, opts ...remote.Option) error {
	err := remote.Delete(ref, opts...)
	switch statusOf(err) {
	case 0:
		if err != nil {
			return fmt.Errorf("deleting %s: %w", ref, err)
		}
		return nil
	case http.StatusNotFound:
		return nil // gone already (a tag of a manifest deleted just before)
	case http.StatusMethodNotAllowed:
		return errDeletesRefused
	default:
		return fmt.Errorf("deleting %s: %w", ref, err)
	}
}

// listTags answers the repository's tags; none when the registry does not know it.
func listTags(r name.Repository, opts ...remote.Option) ([]string, error) {
	tags, err := remote.List(r, opts...)
	if statusOf(err) == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing the tags of %s: %w", r, err)
	}
	sort.Strings(tags)
	return tags, nil
}

// statusOf: the HTTP status of a registry error, 0 for no error or one that is not the registry's answer.
func statusOf(err error) int {
	var terr *transport.Error
	if errors.As(err, &terr) {
		return terr.StatusCode
	}
	return 0
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
