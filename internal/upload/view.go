package upload

import (
	"fmt"

	"github.com/google/uuid"
	"github.com/oapi-codegen/nullable"

	"creativeapi/gen/api"
	"creativeapi/internal/apifield"
)

// ContentURL is the API path an uploaded asset's url names, absolute
// under base.
func ContentURL(base string, org, asset uuid.UUID) string {
	return base + ContentPath(org, asset)
}

// ContentPath is the path at which members download an uploaded asset
// of org; GuestContentPath the guests' (docs/shares.md).
func ContentPath(org, asset uuid.UUID) string {
	return fmt.Sprintf("/api/v1/organizations/%s/assets/%s/content", org, asset)
}

// GuestContentPath is the path at which a guest downloads an uploaded
// asset of a creative their share holds.
func GuestContentPath(asset uuid.UUID) string {
	return fmt.Sprintf("/api/v1/guest/assets/%s/content", asset)
}

// Answer is the upload as the API shows it, its asset's url under base
// (the server's public address).
func (v View) Answer(base string) api.Upload {
	out := api.Upload{
		Id: v.ID, Status: api.UploadStatus(v.Status), FileName: v.FileName, MimeType: api.AssetMimeType(v.MimeType),
		SizeBytes: v.SizeBytes, Sha256: v.Sha256, PartSize: v.PartSize, Parts: make([]api.UploadPart, len(v.Parts)),
		Asset: nullable.NewNullNullable[api.Asset](), CreatedAt: v.CreatedAt, ExpiresAt: v.ExpiresAt,
	}
	for i, p := range v.Parts {
		header := p.Header
		if header == nil {
			header = map[string]string{}
		}
		out.Parts[i] = api.UploadPart{Number: p.Number, Url: apifield.Nullable(p.URL), ExpiresAt: apifield.Nullable(p.ExpiresAt), Headers: header, Received: p.Received}
	}
	if v.AssetID != nil {
		out.Asset = nullable.NewNullableWithValue(api.Asset{
			Id: *v.AssetID, FileName: v.FileName, MimeType: v.MimeType, SizeBytes: v.SizeBytes, Sha256: v.Sha256,
			Url:   ContentURL(base, v.OrganizationID, *v.AssetID),
			Width: apifield.Nullable(widen32(v.Width)), Height: apifield.Nullable(widen32(v.Height)),
			DurationMs: apifield.Nullable(widen32(v.DurationMs)), UploadId: nullable.NewNullableWithValue(v.ID),
		})
	}
	return out
}

func widen32(v *int32) *int {
	if v == nil {
		return nil
	}
	n := int(*v)
	return &n
}
