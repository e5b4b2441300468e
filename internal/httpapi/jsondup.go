package httpapi

import (
	"bytes"
	"encoding/json"
)

// setAbove is the member count beyond which an object's names go into a
// set, so the scan stays linear for objects of thousands of members.
const setAbove = 16

// duplicateMember reports the first member name that an object of body
// repeats. body must be valid JSON (json.Valid): the scan only tracks
// strings, objects and arrays. Names are compared after unescaping, so
// "a" and "\u0061" are the same member. The names of the open objects
// share one list (an object's names follow its parent's and are dropped
// when it closes), so a small body costs no allocation.
func duplicateMember(body []byte) (string, bool) {
	type frame struct {
		start int                 // the frame's first name in names
		set   map[string]struct{} // set of a large object's names
	}
	var frameBuf [8]frame
	var nameBuf [32][]byte
	frames, names := frameBuf[:0], nameBuf[:0]
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '{', '[':
			frames = append(frames, frame{start: len(names)})
		case '}', ']':
			names = names[:frames[len(frames)-1].start]
			frames = frames[:len(frames)-1]
		case '"':
			start, escaped := i, false
			for i++; body[i] != '"'; i++ {
				if body[i] == '\\' {
					escaped = true
					i++
				}
			}
			j := i + 1
			for j < len(body) && (body[j] == ' ' || body[j] == '\t' || body[j] == '\n' || body[j] == '\r') {
				j++
			}
			if j == len(body) || body[j] != ':' || len(frames) == 0 {
				continue // a value, not a member name
			}
			name := body[start+1 : i]
			if escaped {
				var s string
				if json.Unmarshal(body[start:i+1], &s) != nil {
					continue
				}
				name = []byte(s)
			}
			f := &frames[len(frames)-1]
			if f.set != nil {
				if _, ok := f.set[string(name)]; ok {
					return string(name), true
				}
				f.set[string(name)] = struct{}{}
				continue
			}
			for _, n := range names[f.start:] {
				if bytes.Equal(n, name) {
					return string(name), true
				}
			}
			names = append(names, name)
			if len(names)-f.start > setAbove {
				f.set = make(map[string]struct{}, 2*setAbove)
				for _, n := range names[f.start:] {
					f.set[string(n)] = struct{}{}
				}
				names = names[:f.start]
			}
		}
	}
	return "", false
}
