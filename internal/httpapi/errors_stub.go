package httpapi

import "errors"

// errNotImplemented marks handlers not written yet.
var errNotImplemented = errors.New("not implemented")
