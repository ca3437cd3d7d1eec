package opendata

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/toolport/toolport/tool"
)

// GetDatasetDetailsInput is the input of getDatasetDetails.
type GetDatasetDetailsInput struct {
	ID     string `json:"id" jsonschema:"The dataset's name (as in its URL) or its UUID, as searchDatasets returns them" schema:"minLength=1,maxLength=200"`
	Portal string `json:"portal,omitempty" jsonschema:"Another CKAN portal to query instead of the default (data.gov.il), as its root or API URL" schema:"maxLength=500"`
}

// GetDatasetDetailsOutput is a dataset's full metadata.
type GetDatasetDetailsOutput struct {
	ID               string            `json:"id"`
	Name             string            `json:"name"`
	Title            string            `json:"title"`
	Notes            string            `json:"notes" jsonschema:"The dataset's description (often Markdown)"`
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
	Resources        []ResourceInfo    `json:"resources"`
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

// Summary names the dataset and counts its resources.
func (o GetDatasetDetailsOutput) Summary() string {
	title := o.Title
	if title == "" {
		title = o.Name
	}
	return fmt.Sprintf("%q: %d resources", title, len(o.Resources))
}

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
		State: pkg.State, Private: pkg.Private,
		Author: pkg.Author, AuthorEmail: pkg.AuthorEmail, Maintainer: pkg.Maintainer, MaintainerEmail: pkg.MaintainerEmail,
		License:         License{ID: pkg.LicenseID, Title: pkg.LicenseTitle, URL: pkg.LicenseURL},
		Tags:            make([]string, 0, len(pkg.Tags)),
		Groups:          make([]GroupRef, 0, len(pkg.Groups)),
		Resources:       make([]ResourceInfo, 0, len(pkg.Resources)),
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
	for _, r := range pkg.Resources {
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
