// Package userref builds the one shape the API names a person with: every
// UserRef carries its kind (docs/shares.md), so a client never has to guess
// whether an id is a member's or a guest's.
package userref

import (
	"github.com/google/uuid"

	"creativeapi/gen/api"
)

// Member is the member id named name.
func Member(id uuid.UUID, name string) api.UserRef {
	return api.UserRef{Id: id, Name: name, Kind: api.UserRefKindUser}
}

// Guest is the guest id (a person who came by a share's link) named name.
func Guest(id uuid.UUID, name string) api.UserRef {
	return api.UserRef{Id: id, Name: name, Kind: api.UserRefKindGuest}
}
