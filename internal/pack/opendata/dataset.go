package opendata

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/toolport/toolport/ckan"
	"github.com/toolport/toolport/internal/httpclient"
	"github.com/toolport/toolport/tool"
)

// GetDatasetDetailsInput is the input of getDatasetDetails.
type GetDatasetDetailsInput struct {
	ID              string `json:"id" jsonschema:"The dataset's name (as in its URL) or its UUID, as searchDatasets returns them" schema:"minLength=1,maxLength=200"`
	ResourcesLimit  int    `json:"resourcesLimit,omitempty" jsonschema:"How many of its resources to list (1-500); a dataset with more says so in resourceCount and note" schema:"minimum=1,maximum=500,default=50"`
	ResourcesOffset int    `json:"resourcesOffset,omitempty" jsonschema:"How many resources to skip, to page through a dataset with many" schema:"minimum=0,maximum=100000,default=0"`
	FullNotes       bool   `json:"fullNotes,omitempty" jsonschema:"Return the whole description; by default a long one is cut after 3000 characters and notesTruncated says so"`
	Portal          string `json:"portal,omitempty" jsonschema:"A CKAN portal's root or API URL, instead of data.gov.il" schema:"maxLength=500"`
}

// GetDatasetDetailsOutput is a dataset's full metadata.
type GetDatasetDetailsOutput struct {
	ID               string            `json:"id"`
	Name             string            `json:"name"`
	Title            string            `json:"title"`
	Notes            string            `json:"notes" jsonschema:"The dataset's description (often Markdown); cut with … when notesTruncated"`
	NotesTruncated   bool              `json:"notesTruncated,omitempty" jsonschema:"The description was cut; fullNotes returns all of it"`
	NotesLength      int               `json:"notesLength,omitempty" jsonschema:"The whole description's length in characters, when cut"`
	URL              string            `json:"url,omitempty" jsonschema:"The source page the publisher gave, if any"`
	Version          string            `json:"version,omitempty"`
	State            string            `json:"state,omitempty"`
	Private          bool              `json:"private"`
	Author           string            `json:"author,omitempty"`
	AuthorEmail      string            `json:"author_email,omitempty"`
	Maintainer       string            `json:"maintainer,omitempty"`
	MaintainerEmail  string            `json:"maintainer_email,omitempty"`
	License          License           `json:"license"`
	Organization     *OrganizationInfo `json:"organization"`
	Tags             []string          `json:"tags"`
	Groups           []GroupRef        `json:"groups"`
	Resources        []ResourceInfo    `json:"resources" jsonschema:"Its resources, resourcesLimit of them from resourcesOffset"`
	ResourceCount    int               `json:"resourceCount" jsonschema:"How many resources the dataset has in all"`
	Formats          []string          `json:"formats" jsonschema:"The distinct formats of all its resources"`
	Note             string            `json:"note,omitempty" jsonschema:"What was left out and how to get it"`
	Extras           map[string]string `json:"extras" jsonschema:"Free-form metadata the publisher added"`
	MetadataCreated  string            `json:"metadata_created"`
	MetadataModified string            `json:"metadata_modified"`
	DatasetURL       string            `json:"datasetUrl" jsonschema:"The dataset's page on the portal (the same as portalUrl; kept for existing clients)"`
	PortalURL        string            `json:"portalUrl" jsonschema:"The dataset's page on the portal, for people"`
	APIURL           string            `json:"apiUrl" jsonschema:"The CKAN API call that produced this result"`
}

// License is a dataset's licence.
type License struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	URL   string `json:"url,omitempty"`
}

// OrganizationInfo is the publisher of a dataset.
type OrganizationInfo struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
	PortalURL   string `json:"portalUrl,omitempty" jsonschema:"The organization's page on the portal"`
}

// GroupRef names a group a dataset belongs to.
type GroupRef struct {
	Name  string `json:"name"`
	Title string `json:"title"`
}

// ResourceInfo is a downloadable file or API of a dataset.
type ResourceInfo struct {
	ID              string `json:"id" jsonschema:"The resource id; pass it to queryDatastore when datastore_active is true"`
	PackageID       string `json:"package_id,omitempty" jsonschema:"The id of the dataset it belongs to"`
	Name            string `json:"name"`
	Description     string `json:"description"`
	URL             string `json:"url"`
	Format          string `json:"format"`
	Mimetype        string `json:"mimetype,omitempty"`
	Size            *int64 `json:"size" jsonschema:"Size in bytes, when the portal knows it"`
	DatastoreActive bool   `json:"datastore_active" jsonschema:"Whether its rows can be queried with queryDatastore"`
	Created         string `json:"created,omitempty"`
	LastModified    string `json:"last_modified,omitempty"`
	PortalURL       string `json:"portalUrl,omitempty" jsonschema:"The resource's page on the portal, within its dataset"`
}

// Summary names the dataset, its publisher and formats, and counts its
// resources.
func (o GetDatasetDetailsOutput) Summary() string {
	s := fmt.Sprintf("%q", cmp.Or(o.Title, o.Name))
	if o.Organization != nil {
		s += fmt.Sprintf(" by %s", cmp.Or(o.Organization.Title, o.Organization.Name))
	}
	s += fmt.Sprintf(": %d resources", o.ResourceCount)
	if len(o.Formats) > 0 {
		s += " (" + strings.Join(o.Formats, ", ") + ")"
	}
	if o.Note != "" {
		s += "; " + o.Note
	}
	return s
}

// maxNotes bounds the description getDatasetDetails returns by default.
const maxNotes = 3000

func getDatasetDetailsTool(p *pack) *tool.Tool {
	return tool.Must(tool.New(tool.Spec{
		Name:  "getDatasetDetails",
		Title: "Get dataset details (CKAN)",
		Description: "Get the full metadata of one dataset by name or id: description, organization, tags, licence, extras, " +
			"and its resources (download URL, format, description, size, and whether the rows can be queried with queryDatastore).",
		Pack:        Pack,
		Annotations: annotations(),
	}, p.getDatasetDetails))
}

func (p *pack) getDatasetDetails(ctx context.Context, in GetDatasetDetailsInput) (GetDatasetDetailsOutput, error) {
	id := strings.TrimSpace(in.ID)
	if id == "" {
		return GetDatasetDetailsOutput{}, tool.Errorf(tool.CodeValidation, "id: must not be blank")
	}
	c, err := p.client(in.Portal)
	if err != nil {
		return GetDatasetDetailsOutput{}, err
	}
	pkg, resp, err := c.PackageShow(ctx, id)
	if err != nil {
		return GetDatasetDetailsOutput{}, toolError(err)
	}
	out := GetDatasetDetailsOutput{
		ID: pkg.ID, Name: pkg.Name, Title: pkg.Title, Notes: pkg.Notes, URL: pkg.URL, Version: pkg.Version,
		ResourceCount: len(pkg.Resources), Formats: formatsOf(pkg.Resources),
		State: pkg.State, Private: pkg.Private,
		Author: pkg.Author, AuthorEmail: pkg.AuthorEmail, Maintainer: pkg.Maintainer, MaintainerEmail: pkg.MaintainerEmail,
		License:         License{ID: pkg.LicenseID, Title: pkg.LicenseTitle, URL: pkg.LicenseURL},
		Tags:            make([]string, 0, len(pkg.Tags)),
		Groups:          make([]GroupRef, 0, len(pkg.Groups)),
		Resources:       make([]ResourceInfo, 0, min(len(pkg.Resources), in.ResourcesLimit)),
		Extras:          make(map[string]string, len(pkg.Extras)),
		MetadataCreated: pkg.MetadataCreated, MetadataModified: pkg.MetadataModified,
		APIURL: resp.URL,
	}
	pages := pagesOf(c)
	var org string
	if o := pkg.Organization; o != nil {
		org = o.Name
		out.Organization = &OrganizationInfo{ID: o.ID, Name: o.Name, Title: o.Title, Description: o.Description,
			PortalURL: pages.Organization(o.Name)}
	}
	out.PortalURL = pages.Dataset(org, pkg.Name)
	out.DatasetURL = out.PortalURL
	for _, t := range pkg.Tags {
		out.Tags = append(out.Tags, t.Name)
	}
	for _, g := range pkg.Groups {
		out.Groups = append(out.Groups, GroupRef{Name: g.Name, Title: cmp.Or(g.Title, g.DisplayName)})
	}
	if !in.FullNotes {
		if n := utf8.RuneCountInString(pkg.Notes); n > maxNotes {
			out.Notes, out.NotesTruncated, out.NotesLength = httpclient.ClipRunes(pkg.Notes, maxNotes), true, n
		}
	}
	page := pkg.Resources[min(in.ResourcesOffset, len(pkg.Resources)):min(in.ResourcesOffset+in.ResourcesLimit, len(pkg.Resources))]
	if len(page) < len(pkg.Resources) {
		out.Note = fmt.Sprintf("resources %d-%d of %d listed", in.ResourcesOffset+min(1, len(page)), in.ResourcesOffset+len(page), len(pkg.Resources))
		if next := in.ResourcesOffset + len(page); next < len(pkg.Resources) {
			out.Note += fmt.Sprintf("; more with resourcesOffset=%d", next)
		}
	}
	if out.NotesTruncated {
		out.Note = strings.TrimPrefix(out.Note+fmt.Sprintf("; description cut at %d of %d characters (fullNotes for all)", maxNotes, out.NotesLength), "; ")
	}
	for _, r := range page {
		out.Resources = append(out.Resources, ResourceInfo{
			ID: r.ID, Name: r.Name, Description: r.Description, URL: r.URL, Format: r.Format, Mimetype: r.Mimetype,
			Size: r.Size.Ptr(), DatastoreActive: bool(r.DatastoreActive), Created: r.Created, LastModified: r.LastModified,
			PortalURL: pages.Resource(org, pkg.Name, r.ID),
		})
	}
	for _, e := range pkg.Extras {
		out.Extras[e.Key] = string(e.Value)
	}
	return out, nil
}

// formatsOf lists the distinct formats of resources, in order, ignoring case.
func formatsOf(rs []ckan.Resource) []string {
	out := []string{}
	for _, r := range rs {
		f := strings.TrimSpace(r.Format)
		if f != "" && !slices.ContainsFunc(out, func(g string) bool { return strings.EqualFold(f, g) }) {
			out = append(out, f)
		}
	}
	return out
}
