//! No module of a workspace crate imports one that imports it back, directly or around a loop
//! (crates themselves cannot: Cargo refuses cyclic dependencies).
//!
//! The graph is read from the sources with `syn`: one node per file (`src/a/b.rs` and
//! `src/a/b/mod.rs` are module `a::b`; inline modules such as `mod tests { … }` belong to their
//! file), found by following `mod` declarations from `lib.rs`/`main.rs`. One edge per path in
//! code or in a `use` that leads into another file of the same crate: paths starting with
//! `crate::`, `super::` or `self::`, with a child module's name, or with a name a `use`
//! brought in; paths inside macro invocations are read from their tokens. A path is followed
//! through `use` declarations (named and glob) to the module that defines the item, so a
//! `pub use` re-export is a door, not an import: it adds no edge of its own. A cycle is a
//! strongly connected component of more than one file (R. Tarjan, "Depth-first search and
//! linear graph algorithms", SIAM J. Comput. 1(2), 1972); the test names each of its edges
//! with its file and the path as written there.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// A module's path from its crate root (`[]` is the root).
type Module = Vec<String>;

/// What one module (file or inline) declares and refers to.
#[derive(Default)]
struct Scope {
    /// Child modules declared with `mod`.
    children: BTreeSet<String>,
    /// Names of items defined here (functions, types, traits, constants, macros).
    defined: BTreeSet<String>,
    /// `use` names: alias -> path as written, and whether it is a re-export (`pub use`).
    named: BTreeMap<String, (Vec<String>, bool)>,
    /// `use …::*` paths as written.
    globs: Vec<Vec<String>>,
}

/// One reference: the module it is written in, the path as written, and whether it is a
/// re-export (which adds no edge).
struct Reference {
    within: Module,
    segments: Vec<String>,
    reexport: bool,
}

/// A crate's sources: every module's scope, the file each file-module is in, and every
/// reference.
#[derive(Default)]
struct Crate {
    scopes: BTreeMap<Module, Scope>,
    files: BTreeMap<Module, PathBuf>,
    references: Vec<Reference>,
}

/// Reads one file's items into `krate`, as module `module`.
struct Reader<'a> {
    krate: &'a mut Crate,
    module: Module,
    /// File modules declared by `mod x;` (to be read next).
    pending: Vec<Module>,
}

impl Reader<'_> {
    fn scope(&mut self) -> &mut Scope {
        self.krate.scopes.entry(self.module.clone()).or_default()
    }

    fn reference(&mut self, segments: Vec<String>, reexport: bool) {
        self.krate.references.push(Reference {
            within: self.module.clone(),
            segments,
            reexport,
        });
    }

    fn use_tree(&mut self, tree: &syn::UseTree, prefix: &mut Vec<String>, reexport: bool) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(&p.tree, prefix, reexport);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let name = n.ident.to_string();
                let mut path = prefix.clone();
                // `use a::{self}` names `a` itself.
                if name != "self" || path.is_empty() {
                    path.push(name);
                }
                let alias = path.last().cloned().unwrap_or_default();
                self.scope().named.insert(alias, (path.clone(), reexport));
                self.reference(path, reexport);
            }
            syn::UseTree::Rename(r) => {
                let mut path = prefix.clone();
                if r.ident != "self" || path.is_empty() {
                    path.push(r.ident.to_string());
                }
                self.scope()
                    .named
                    .insert(r.rename.to_string(), (path.clone(), reexport));
                self.reference(path, reexport);
            }
            syn::UseTree::Glob(_) => {
                self.scope().globs.push(prefix.clone());
                self.reference(prefix.clone(), reexport);
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(t, prefix, reexport);
                }
            }
        }
    }

    fn define(&mut self, ident: &syn::Ident) {
        self.scope().defined.insert(ident.to_string());
    }
}

impl<'ast> Visit<'ast> for Reader<'_> {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        let name = m.ident.to_string();
        self.scope().children.insert(name.clone());
        let mut inner = self.module.clone();
        inner.push(name);
        match &m.content {
            Some((_, items)) => {
                let outer = std::mem::replace(&mut self.module, inner);
                self.scope();
                for item in items {
                    self.visit_item(item);
                }
                self.module = outer;
            }
            None => self.pending.push(inner),
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let reexport = !matches!(u.vis, syn::Visibility::Inherited);
        self.use_tree(&u.tree, &mut Vec::new(), reexport);
    }

    fn visit_item_fn(&mut self, i: &'ast syn::ItemFn) {
        self.define(&i.sig.ident);
        syn::visit::visit_item_fn(self, i);
    }
    fn visit_item_struct(&mut self, i: &'ast syn::ItemStruct) {
        self.define(&i.ident);
        syn::visit::visit_item_struct(self, i);
    }
    fn visit_item_enum(&mut self, i: &'ast syn::ItemEnum) {
        self.define(&i.ident);
        syn::visit::visit_item_enum(self, i);
    }
    fn visit_item_union(&mut self, i: &'ast syn::ItemUnion) {
        self.define(&i.ident);
        syn::visit::visit_item_union(self, i);
    }
    fn visit_item_trait(&mut self, i: &'ast syn::ItemTrait) {
        self.define(&i.ident);
        syn::visit::visit_item_trait(self, i);
    }
    fn visit_item_type(&mut self, i: &'ast syn::ItemType) {
        self.define(&i.ident);
        syn::visit::visit_item_type(self, i);
    }
    fn visit_item_const(&mut self, i: &'ast syn::ItemConst) {
        self.define(&i.ident);
        syn::visit::visit_item_const(self, i);
    }
    fn visit_item_static(&mut self, i: &'ast syn::ItemStatic) {
        self.define(&i.ident);
        syn::visit::visit_item_static(self, i);
    }
    fn visit_item_macro(&mut self, i: &'ast syn::ItemMacro) {
        if let Some(ident) = &i.ident {
            self.define(ident);
        }
        syn::visit::visit_item_macro(self, i);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        // One-segment paths name a local or something a `use` brought in (that `use` is the
        // edge); `<T as Trait>` and generic arguments are visited below.
        if p.segments.len() > 1 && p.leading_colon.is_none() {
            let segments = p.segments.iter().map(|s| s.ident.to_string()).collect();
            self.reference(segments, false);
        }
        syn::visit::visit_path(self, p);
    }

    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {
        // `pub(super)`, `pub(in crate::a)` grant access; they import nothing.
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.macro_tokens(m.tokens.clone());
        syn::visit::visit_macro(self, m);
    }
}

impl Reader<'_> {
    /// Paths `crate::a::b`, `$crate::a`, `super::a`, `self::a` inside a macro's tokens.
    fn macro_tokens(&mut self, tokens: TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < tokens.len() {
            if let TokenTree::Group(g) = &tokens[i] {
                self.macro_tokens(g.stream());
                i += 1;
                continue;
            }
            let starts = matches!(&tokens[i], TokenTree::Ident(id)
                if id == "crate" || id == "super" || id == "self");
            if !starts {
                i += 1;
                continue;
            }
            let mut segments = vec![tokens[i].to_string()];
            let mut j = i + 1;
            loop {
                let colons = matches!((tokens.get(j), tokens.get(j + 1)),
                    (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
                        if a.as_char() == ':' && b.as_char() == ':');
                match tokens.get(j + 2) {
                    Some(TokenTree::Ident(id)) if colons => {
                        segments.push(id.to_string());
                        j += 3;
                    }
                    _ => break,
                }
            }
            if segments.len() > 1 {
                self.reference(segments, false);
            }
            i = j;
        }
    }
}

/// The file of module `m` under `src` (`a/b.rs` or `a/b/mod.rs`), if there is one.
fn file_of(src: &Path, m: &Module) -> Option<PathBuf> {
    let rel: PathBuf = m.iter().collect();
    let flat = src.join(&rel).with_extension("rs");
    let nested = src.join(&rel).join("mod.rs");
    [flat, nested].into_iter().find(|p| p.is_file())
}

/// Reads the crate whose root file is `root` (`src/lib.rs` or `src/main.rs`).
fn read_crate(root: &Path) -> Result<Crate, String> {
    let src = root.parent().ok_or("a root file has a directory")?;
    let mut krate = Crate::default();
    let mut queue = vec![(Module::new(), root.to_path_buf())];
    while let Some((module, path)) = queue.pop() {
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let file = syn::parse_file(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        krate.files.insert(module.clone(), path.clone());
        let mut reader = Reader {
            krate: &mut krate,
            module: module.clone(),
            pending: Vec::new(),
        };
        reader.scope();
        reader.visit_file(&file);
        for child in reader.pending {
            match file_of(src, &child) {
                Some(p) => queue.push((child, p)),
                None => {
                    return Err(format!(
                        "{}: no file for module {}",
                        path.display(),
                        child.join("::")
                    ))
                }
            }
        }
    }
    Ok(krate)
}

impl Crate {
    /// `segments` as written in `within`, made absolute from the crate root; `None` when it
    /// leaves the crate (another crate, a prelude name, a local item).
    fn absolute(&self, within: &Module, segments: &[String], hops: usize) -> Option<Module> {
        let first = segments.first()?;
        let mut base = within.clone();
        let mut rest = segments;
        match first.as_str() {
            "crate" | "$crate" => {
                base.clear();
                rest = &rest[1..];
            }
            "self" => rest = &rest[1..],
            "super" => {}
            _ => {
                let scope = self.scopes.get(within)?;
                if scope.children.contains(first) {
                    // A child module: relative to here.
                } else if let Some((path, _)) = scope.named.get(first) {
                    if hops > 16 || path.first() == Some(first) && path.len() == 1 {
                        return None;
                    }
                    let mut abs = self.absolute(within, path, hops + 1)?;
                    abs.extend(rest[1..].iter().cloned());
                    return Some(abs);
                } else {
                    return None;
                }
            }
        }
        while rest.first().map(String::as_str) == Some("super") {
            base.pop()?;
            rest = &rest[1..];
        }
        base.extend(rest.iter().cloned());
        Some(base)
    }

    /// The module where absolute path `path` lands: down through child modules, through `use`
    /// names and globs to the module that defines the item; `None` when a `use` leads out of
    /// the crate (a re-exported item of another crate).
    fn resolve(&self, path: &[String], hops: usize) -> Option<Module> {
        let mut here = Module::new();
        for (k, seg) in path.iter().enumerate() {
            let Some(scope) = self.scopes.get(&here) else {
                break;
            };
            if scope.children.contains(seg) {
                here.push(seg.clone());
                continue;
            }
            if scope.defined.contains(seg) || hops > 16 {
                break;
            }
            if let Some((to, _)) = scope.named.get(seg) {
                let mut abs = self.absolute(&here, to, hops + 1)?;
                abs.extend(path[k + 1..].iter().cloned());
                return self.resolve(&abs, hops + 1);
            }
            for glob in &scope.globs {
                let Some(mut abs) = self.absolute(&here, glob, hops + 1) else {
                    continue;
                };
                let Some(via) = self.resolve(&abs, hops + 1) else {
                    continue;
                };
                let has = self.scopes.get(&via).is_some_and(|s| {
                    s.children.contains(seg) || s.defined.contains(seg) || s.named.contains_key(seg)
                });
                if has {
                    abs.extend(path[k..].iter().cloned());
                    return self.resolve(&abs, hops + 1);
                }
            }
            break;
        }
        Some(here)
    }

    /// The file-module that module `m` is written in.
    fn file_module(&self, m: &Module) -> Module {
        let n = (0..=m.len())
            .rev()
            .find(|&n| self.files.contains_key(&m[..n]))
            .unwrap_or(0);
        m[..n].to_vec()
    }

    /// Edges between files: from -> to -> the first path that makes it (`file: path`).
    fn edges(&self) -> BTreeMap<Module, BTreeMap<Module, String>> {
        let mut edges: BTreeMap<Module, BTreeMap<Module, String>> = BTreeMap::new();
        for r in self.references.iter().filter(|r| !r.reexport) {
            let Some(abs) = self.absolute(&r.within, &r.segments, 0) else {
                continue;
            };
            let Some(to) = self.resolve(&abs, 0) else {
                continue;
            };
            let (from, to) = (self.file_module(&r.within), self.file_module(&to));
            if from != to {
                let at = format!("{}: {}", self.files[&from].display(), r.segments.join("::"));
                edges.entry(from).or_default().entry(to).or_insert(at);
            }
        }
        edges
    }
}

/// Tarjan's strongly connected components of `edges` over `nodes`.
fn components(
    nodes: &[Module],
    edges: &BTreeMap<Module, BTreeMap<Module, String>>,
) -> Vec<Vec<Module>> {
    struct State<'a> {
        edges: &'a BTreeMap<Module, BTreeMap<Module, String>>,
        index: BTreeMap<Module, usize>,
        low: BTreeMap<Module, usize>,
        stack: Vec<Module>,
        on: BTreeSet<Module>,
        out: Vec<Vec<Module>>,
    }
    fn visit(s: &mut State<'_>, v: &Module) {
        let n = s.index.len();
        s.index.insert(v.clone(), n);
        s.low.insert(v.clone(), n);
        s.stack.push(v.clone());
        s.on.insert(v.clone());
        let next: Vec<Module> = s
            .edges
            .get(v)
            .map(|e| e.keys().cloned().collect())
            .unwrap_or_default();
        for w in next {
            if !s.index.contains_key(&w) {
                visit(s, &w);
                let low = s.low[&w].min(s.low[v]);
                s.low.insert(v.clone(), low);
            } else if s.on.contains(&w) {
                let low = s.index[&w].min(s.low[v]);
                s.low.insert(v.clone(), low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(&w);
                let done = &w == v;
                comp.push(w);
                if done {
                    break;
                }
            }
            s.out.push(comp);
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for m in nodes {
        if !s.index.contains_key(m) {
            visit(&mut s, m);
        }
    }
    s.out
}

/// The cycles of the crate rooted at `root`, each as its edges `a -> b (file: path)`.
fn cycles_of(root: &Path) -> Result<Vec<Vec<String>>, String> {
    let krate = read_crate(root)?;
    let edges = krate.edges();
    let nodes: Vec<Module> = krate.files.keys().cloned().collect();
    let name = |m: &Module| {
        if m.is_empty() {
            "crate".to_string()
        } else {
            m.join("::")
        }
    };
    let mut cycles = Vec::new();
    for comp in components(&nodes, &edges)
        .into_iter()
        .filter(|c| c.len() > 1)
    {
        let set: BTreeSet<&Module> = comp.iter().collect();
        let mut lines = Vec::new();
        for a in &comp {
            for (b, at) in edges.get(a).into_iter().flatten() {
                if set.contains(b) {
                    lines.push(format!("{} -> {} ({at})", name(a), name(b)));
                }
            }
        }
        lines.sort();
        cycles.push(lines);
    }
    Ok(cycles)
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut roots: Vec<PathBuf> = std::fs::read_dir(&crates)
        .expect("crates/ is readable")
        .flatten()
        .flat_map(|e| ["lib.rs", "main.rs"].map(|f| e.path().join("src").join(f)))
        .filter(|p| p.is_file())
        .collect();
    roots.sort();
    assert!(roots.len() >= 8, "found only {roots:?}");
    let mut report = Vec::new();
    for root in &roots {
        for cycle in cycles_of(root).unwrap_or_else(|e| panic!("{e}")) {
            report.push(format!(
                "cycle in {}:\n  {}",
                root.display(),
                cycle.join("\n  ")
            ));
        }
    }
    assert!(
        report.is_empty(),
        "module import cycles (move what both sides need to the module that owns it, so that \
         imports go one way):\n{}",
        report.join("\n")
    );
}

#[test]
fn the_cycle_check_finds_a_planted_cycle_through_use_trees_reexports_and_macros() {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path();
    let write = |rel: &str, text: &str| {
        let p = src.join(rel);
        std::fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    };
    write(
        "lib.rs",
        "pub mod document;\npub mod sink;\npub use document::Doc;\n",
    );
    write(
        "document.rs",
        "use crate::sink::{json::Section, self};\n// use crate::other;\npub struct Doc;\n\
         #[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
    );
    write(
        "sink/mod.rs",
        "pub mod json;\npub use json::*;\npub use std::fmt::Write;\n",
    );
    write(
        "sink/json.rs",
        "pub struct Section;\npub(super) fn f(_: &crate::Doc) { let _ = \"crate::x::y\"; }\n\
         fn w(s: &mut String) { let _ = super::Write::write_str(s, \"\"); }\n",
    );
    let cycles = cycles_of(&src.join("lib.rs")).expect("readable");
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    let text = cycles[0].join("\n");
    // Through the root's re-export `crate::Doc` to document.rs; `pub use json::*` is no edge,
    // nor is a path through a re-export of another crate's item (`super::Write`).
    assert!(text.contains("document -> sink::json"), "{text}");
    assert!(text.contains("sink::json -> document"), "{text}");
    assert!(
        !text.contains("sink -> ") && !text.contains("-> sink ("),
        "{text}"
    );

    // Without the import back there is no cycle; a path in a macro's tokens is one again.
    write("sink/json.rs", "pub struct Section;\n");
    assert!(cycles_of(&src.join("lib.rs")).expect("readable").is_empty());
    write(
        "sink/json.rs",
        "pub struct Section;\nfn g() { println!(\"{}\", crate::document::Doc); }\n",
    );
    assert_eq!(cycles_of(&src.join("lib.rs")).expect("readable").len(), 1);

    // A child module named without `self::`, and `super::` from the child, close a loop too.
    write(
        "sink/json.rs",
        "pub struct Section;\npub fn h() { super::g(); }\n",
    );
    write(
        "sink/mod.rs",
        "pub mod json;\npub fn g() {}\nfn k() { json::h(); }\n",
    );
    let cycles = cycles_of(&src.join("lib.rs")).expect("readable");
    assert!(
        cycles
            .iter()
            .any(|c| c.join("\n").contains("sink -> sink::json")),
        "{cycles:?}"
    );
}
