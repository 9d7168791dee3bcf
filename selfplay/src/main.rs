fn main() {
    eprintln!("usage: selfplay <command>\n\nThe selfplay stage is not implemented yet; see the open issues.");
    std::process::exit(2);
}
