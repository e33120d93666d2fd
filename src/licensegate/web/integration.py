"""The integration panel's content: what a program needs to reach this service (the address,
the application's ownerid, name and version, its public key and secret) and, for each client
library, what to set in it. The snippets are written here from the libraries' documented
settings; nothing is copied from them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Snippet:
    id: str
    library: str
    api: str  # the API version the library speaks
    code: str


def snippets(
    *, base: str, name: str, ownerid: str, version: str, public_key: str, secret: str | None
) -> list[Snippet]:
    url13 = f"{base}/api/1.3/"
    hidden = "<the application secret, shown above to the owner>"
    return [
        Snippet(
            "python",
            "Python (KeyAuth-Python-Example)",
            "1.3",
            f'keyauthapp = api(\n    name="{name}",\n    ownerid="{ownerid}",\n    version="{version}",\n'
            f"    hash_to_check=getchecksum(),\n)\n"
            f'# keyauth.py: the API address is "{url13}"\n'
            f'# keyauth.py: the public key that verifies answers is "{public_key}"',
        ),
        Snippet(
            "csharp",
            "C# (KeyAuth-CSharp-Example)",
            "1.3",
            f'public static api KeyAuthApp = new api(\n    name: "{name}",\n    ownerid: "{ownerid}",\n'
            f'    version: "{version}"\n);\n'
            f'// KeyAuth.cs: the API address is "{url13}"\n'
            f'// KeyAuth.cs: the public key that verifies answers is "{public_key}"',
        ),
        Snippet(
            "cpp",
            "C++ (KeyAuth-CPP-Example)",
            "1.3",
            f'std::string name = "{name}";\nstd::string ownerid = "{ownerid}";\n'
            f'std::string version = "{version}";\nstd::string url = "{url13}";\n'
            f'// auth.cpp: API_PUBLIC_KEY = "{public_key}" (rebuild the library)',
        ),
        Snippet(
            "go",
            "Go (KeyAuth-Go-Example)",
            "1.3",
            f'name := "{name}"\nownerid := "{ownerid}"\nversion := "{version}"\nurl := "{url13}"\n'
            f'// KeyAuth.go: PublicKey = "{public_key}"',
        ),
        Snippet(
            "rust",
            "Rust (keyauth crate, API 1.2)",
            "1.2",
            f'name: "{name}"\nowner_id: "{ownerid}"\nsecret: "{secret or hidden}"\nversion: "{version}"\n'
            f'api_url: "{base}/api/1.2/"',
        ),
        Snippet(
            "http",
            "Any HTTP client (API 1.0, the interface document's)",
            "1.0",
            f'curl -X POST "{base}/api/1.0/?type=init&ownerid={ownerid}&name={name}&ver={version}"',
        ),
    ]
