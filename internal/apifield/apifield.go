// Package apifield holds the one conversion every answer builder needs from
// a database row to a generated API type: a nullable column to a field that
// is always present and may be null.
package apifield

import "github.com/oapi-codegen/nullable"

// Nullable is v as an always-present, maybe-null answer field: null when v
// is nil.
func Nullable[T any](v *T) nullable.Nullable[T] {
	if v == nil {
		return nullable.NewNullNullable[T]()
	}
	return nullable.NewNullableWithValue(*v)
}
