fn main() {
    eprintln!("usage: eval <command>\n\nThe eval stage is not implemented yet; see the open issues.");
    std::process::exit(2);
}
