package gateway

import (
	"errors"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/antlerhq/antler/vpath"
)

// activeContent are extensions a browser would run as a page; they are
// always served as downloads (DeerFlow does the same).
var activeContent = map[string]bool{".html": true, ".htm": true, ".xhtml": true, ".svg": true, ".xml": true}

// servedRoots are the virtual folders the artifacts route serves: the
// agent's outputs, and the user's own uploads (whose artifact_url the
// uploads route returns).
var servedRoots = []string{vpath.Outputs, vpath.Uploads}

// getArtifact is GET /api/threads/{tid}/artifacts/{virtual path}, e.g.
// .../artifacts/mnt/user-data/outputs/report.md. The path is resolved
// through the layout and opened inside the thread's user-data folder with
// os.Root, so neither ".." nor a symlink leaves it. Range requests get 206
// (416 with "bytes */size" when unsatisfiable); ?download=true, and active
// content types always, are sent as attachments.
func (s *Server) getArtifact(w http.ResponseWriter, r *http.Request, u *principal) {
	th, ok := s.ownThread(w, r, u)
	if !ok {
		return
	}
	virtual := "/" + strings.TrimLeft(r.PathValue("path"), "/")
	served := false
	for _, root := range servedRoots {
		if virtual == root || strings.HasPrefix(virtual, root+"/") {
			served = true
		}
	}
	tgt, err := s.layout.Locate(u.ID, th.ID, virtual, vpath.Read)
	if err != nil {
		if errors.Is(err, vpath.ErrTraversal) {
			writeError(w, http.StatusForbidden, "%s", vpath.TraversalMessage)
			return
		}
		served = false
	}
	if !served {
		writeError(w, http.StatusNotFound, "Artifact not found: %s", virtual)
		return
	}
	root, err := os.OpenRoot(tgt.Root.Jail)
	if err != nil {
		writeError(w, http.StatusNotFound, "Artifact not found: %s", virtual)
		return
	}
	defer root.Close()
	f, err := root.Open(tgt.Rel)
	if err != nil {
		writeError(w, http.StatusNotFound, "Artifact not found: %s", virtual)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		writeError(w, http.StatusNotFound, "Artifact not found: %s", virtual)
		return
	}
	name := path.Base(tgt.Virtual)
	ext := strings.ToLower(path.Ext(name))
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "private, no-cache")
	download, _ := strconv.ParseBool(r.URL.Query().Get("download"))
	disposition := "inline"
	if download || activeContent[ext] {
		disposition = "attachment"
	}
	h.Set("Content-Disposition", mime.FormatMediaType(disposition, map[string]string{"filename": name}))
	if ext == ".md" || ext == ".markdown" {
		h.Set("Content-Type", "text/markdown; charset=utf-8")
	}
	http.ServeContent(w, r, name, st.ModTime(), f)
}

// artifactURL is the artifacts route of a virtual path.
func artifactURL(threadID, virtual string) string {
	segs := strings.Split(strings.TrimPrefix(virtual, "/"), "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "/api/threads/" + threadID + "/artifacts/" + strings.Join(segs, "/")
}
