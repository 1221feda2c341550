; The closing ')' of (define ...) is missing.
(define (domain bw)
  (:predicates (clear ?x) (holding ?x))
  (:action pickup
    :parameters (?x)
    :precondition (clear ?x)
    :effect (and (holding ?x) (not (clear ?x))))
