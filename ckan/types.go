package ckan

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// Package is a CKAN dataset as package_show and package_search return it.
// Fields that portals fill inconsistently (sizes as strings, extras with
// non-string values) are decoded leniently.
type Package struct {
	ID               string        `json:"id"`
	Name             string        `json:"name"`
	Title            string        `json:"title"`
	Notes            string        `json:"notes"`
	URL              string        `json:"url"`
	Version          string        `json:"version"`
	State            string        `json:"state"`
	Type             string        `json:"type"`
	Private          bool          `json:"private"`
	Author           string        `json:"author"`
	AuthorEmail      string        `json:"author_email"`
	Maintainer       string        `json:"maintainer"`
	MaintainerEmail  string        `json:"maintainer_email"`
	LicenseID        string        `json:"license_id"`
	LicenseTitle     string        `json:"license_title"`
	LicenseURL       string        `json:"license_url"`
	MetadataCreated  string        `json:"metadata_created"`
	MetadataModified string        `json:"metadata_modified"`
	NumResources     int           `json:"num_resources"`
	NumTags          int           `json:"num_tags"`
	Organization     *Organization `json:"organization"`
	Tags             []Tag         `json:"tags"`
	Groups           []Group       `json:"groups"`
	Resources        []Resource    `json:"resources"`
	Extras           []Extra       `json:"extras"`
}

// Resource is a file or API attached to a dataset.
type Resource struct {
	ID              string   `json:"id"`
	PackageID       string   `json:"package_id"`
	Name            string   `json:"name"`
	Description     string   `json:"description"`
	URL             string   `json:"url"`
	Format          string   `json:"format"`
	Mimetype        string   `json:"mimetype"`
	Size            FlexInt  `json:"size"`
	DatastoreActive FlexBool `json:"datastore_active"`
	URLType         string   `json:"url_type"`
	Created         string   `json:"created"`
	LastModified    string   `json:"last_modified"`
}

// Tag is a free or vocabulary tag.
type Tag struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	DisplayName  string `json:"display_name"`
	VocabularyID string `json:"vocabulary_id"`
}

// Group is a CKAN group or organization (organizations are groups with
// is_organization set). PackageCount is only filled by list actions called
// with all_fields.
type Group struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	Title          string `json:"title"`
	DisplayName    string `json:"display_name"`
	Description    string `json:"description"`
	ImageURL       string `json:"image_url"`
	ImageDisplay   string `json:"image_display_url"`
	Created        string `json:"created"`
	State          string `json:"state"`
	Type           string `json:"type"`
	IsOrganization bool   `json:"is_organization"`
	PackageCount   int    `json:"package_count"`
}

// Organization is a publisher: a Group with is_organization set.
type Organization = Group

// Extra is a free-form key/value of a dataset. Value is the string the portal
// stored, or compact JSON when a portal stores something else.
type Extra struct {
	Key   string     `json:"key"`
	Value FlexString `json:"value"`
}

// FlexInt is an integer that portals send as a number, a numeric string, ""
// or null. Valid is false when no integer was given.
type FlexInt struct {
	Value int64
	Valid bool
}

// UnmarshalJSON accepts a number, a string holding one, "" or null. Anything
// else is left invalid rather than failing the whole response.
func (f *FlexInt) UnmarshalJSON(b []byte) error {
	*f = FlexInt{}
	s := string(bytes.TrimSpace(b))
	if strings.HasPrefix(s, `"`) {
		var str string
		if json.Unmarshal(b, &str) != nil {
			return nil
		}
		s = strings.TrimSpace(str)
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		*f = FlexInt{Value: n, Valid: true}
	} else if x, err := strconv.ParseFloat(s, 64); err == nil && x >= -9e18 && x <= 9e18 {
		*f = FlexInt{Value: int64(x), Valid: true}
	}
	return nil
}

// Ptr returns the value, or nil when there is none.
func (f FlexInt) Ptr() *int64 {
	if !f.Valid {
		return nil
	}
	v := f.Value
	return &v
}

// FlexBool is a boolean that portals send as true/false, "true"/"True" or null.
type FlexBool bool

// UnmarshalJSON accepts a boolean or a string spelling one; anything else
// is false.
func (f *FlexBool) UnmarshalJSON(b []byte) error {
	var v any
	if json.Unmarshal(b, &v) != nil {
		*f = false
		return nil
	}
	switch x := v.(type) {
	case bool:
		*f = FlexBool(x)
	case string:
		p, _ := strconv.ParseBool(strings.TrimSpace(x))
		*f = FlexBool(p)
	default:
		*f = false
	}
	return nil
}

// FlexString is a string that a portal may send as any JSON value; non-string
// values keep their compact JSON text, null is "".
type FlexString string

// UnmarshalJSON accepts any JSON value.
func (f *FlexString) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*f = FlexString(s)
		return nil
	}
	if string(bytes.TrimSpace(b)) == "null" {
		*f = ""
		return nil
	}
	*f = FlexString(compactJSON(b))
	return nil
}
