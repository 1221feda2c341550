; The predicate 'clear' is declared twice.
(define (domain bw)
  (:predicates (clear ?x)
               (holding ?x)
               (clear ?y))
  (:action pickup
    :parameters (?x)
    :precondition (clear ?x)
    :effect (holding ?x)))
