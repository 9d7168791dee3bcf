fn main() {
    eprintln!("usage: train <command>\n\nThe train stage is not implemented yet; see the open issues.");
    std::process::exit(2);
}
