package gateway

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/antlerhq/antler/vpath"
)

// servedRoots are the virtual folders the artifacts route serves: the
// agent's outputs, and the user's own uploads (whose artifact_url the
// uploads route returns).
var servedRoots = []string{vpath.Outputs, vpath.Uploads}

// getArtifact is GET /api/threads/{tid}/artifacts/{virtual path}, e.g.
// .../artifacts/mnt/user-data/outputs/report.md. The path is resolved
// through the layout and opened inside the thread's folder with os.Root,
// so neither ".." nor a symlink leaves it. The type comes from the name
// (fileType), never from the bytes: passive types are inline, everything
// else, and everything with ?download=true, is an attachment. Range
// requests get 206 (416 with "bytes */size" when unsatisfiable).
func (s *Server) getArtifact(w http.ResponseWriter, r *http.Request, u *principal) {
	fileHeaders(w)
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
	f, st, err := s.openArtifact(u.ID, th.ID, tgt)
	if err != nil {
		if errors.Is(err, errOutsideThread) {
			s.logger.Warn("artifact refused", "thread_id", th.ID, "path", virtual, "err", err)
			writeError(w, http.StatusForbidden, "%s", vpath.TraversalMessage)
			return
		}
		writeError(w, http.StatusNotFound, "Artifact not found: %s", virtual)
		return
	}
	defer f.Close()
	name := path.Base(tgt.Virtual)
	contentType, inline := fileType(name)
	h := w.Header()
	h.Set("Cache-Control", "private, no-cache")
	h.Set("Content-Type", contentType)
	if contentType == inlineTypes["pdf"] {
		h.Set("Content-Security-Policy", cspPDF)
	}
	disposition := "attachment"
	if download, _ := strconv.ParseBool(r.URL.Query().Get("download")); inline && !download {
		disposition = "inline"
	}
	cd := mime.FormatMediaType(disposition, map[string]string{"filename": name})
	if cd == "" {
		cd = disposition // a name FormatMediaType cannot carry
	}
	h.Set("Content-Disposition", cd)
	http.ServeContent(w, r, name, st.ModTime(), f)
}

// openArtifact opens a located artifact through the thread's folder as an
// os.Root and returns it with its stat; it must be a regular file.
func (s *Server) openArtifact(user, thread string, tgt vpath.Target) (*os.File, os.FileInfo, error) {
	d, err := s.openThreadDir(user, thread, false)
	if err != nil {
		return nil, nil, err
	}
	defer d.Close()
	rel, err := d.rel(tgt.Host)
	if err != nil {
		return nil, nil, err
	}
	f, err := d.root.Open(rel)
	if err != nil {
		return nil, nil, rootError(err)
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s is not a regular file", tgt.Virtual)
	}
	return f, st, nil
}

// artifactURL is the artifacts route of a virtual path.
func artifactURL(threadID, virtual string) string {
	segs := strings.Split(strings.TrimPrefix(virtual, "/"), "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "/api/threads/" + threadID + "/artifacts/" + strings.Join(segs, "/")
}
